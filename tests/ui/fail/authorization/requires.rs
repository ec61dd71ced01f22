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

    #[rpc(requires(any()))]
    fn empty_list(&self);

    #[rpc(requires(one_of("admin", "ops")))]
    fn unknown_list(&self);

    #[rpc(requires(any("admin"), all("ops")))]
    fn two_lists(&self);

    #[rpc(requires(all(admin, ops)))]
    fn list_not_strings(&self);

    #[rpc(requires(any("admin", "admin")))]
    fn listed_twice(&self);

    #[rpc(requires(all("read", "")))]
    fn empty_in_list(&self);
}

fn main() {}
