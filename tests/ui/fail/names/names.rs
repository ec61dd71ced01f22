// Wire names: unique after renames, not `rpc.`, and `into_rpc` is taken.
use rpc_runtime::rpc;

#[rpc(rename_all = "camelCase")]
pub trait Duplicates {
    fn get_block(&self);
    #[rpc(name = "getBlock")]
    fn block(&self);
    fn get_tx(&self);
    fn get_tx_(&self);
}

#[rpc]
pub trait Reserved {
    #[rpc(name = "rpc.discover")]
    fn discover(&self);
    fn into_rpc(&self);
}

#[rpc(namespace = "rpc", namespace_separator = ".")]
pub trait ReservedNamespace {
    fn a(&self);
    fn b(&self);
}

fn main() {}
