// Wire names must be names a caller can send: not empty, no surrounding
// whitespace or control characters, and aliases follow the same rules as
// names (unique, not `rpc.`).
use rpc_runtime::rpc;

#[rpc]
pub trait Names {
    #[rpc(name = "")]
    fn empty(&self);
    #[rpc(name = " padded")]
    fn padded(&self);
    #[rpc(name = "tab\there")]
    fn control(&self);
    fn empty_param(&self, #[rpc(name = "")] a: u8);
    #[rpc(alias = "")]
    fn empty_alias(&self);
    #[rpc(alias = "rpc.old")]
    fn reserved_alias(&self);
    #[rpc(alias = "empty_param")]
    fn taken_alias(&self);
    #[rpc(alias = "old", alias = "old")]
    fn twice(&self);
}

fn main() {}
