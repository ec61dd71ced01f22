// `#[rpc(requires = "...")]` misuse: every mistake in one trait is
// reported in one build.
use rpc_runtime::rpc;

#[rpc]
pub trait Admin {
    #[rpc(requires = "")]
    fn empty_permission(&self);

    #[rpc(requires = "ad min")]
    fn whitespace_in_permission(&self);

    #[rpc(requires)]
    fn requires_without_value(&self);

    #[rpc(requires = admin)]
    fn requires_not_a_string(&self);

    #[rpc(requires = "admin", requires = "root")]
    fn requires_twice(&self);

    #[rpc(require = "admin")]
    fn misspelt(&self);
}

fn main() {}
