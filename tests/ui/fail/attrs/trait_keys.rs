// Trait-level options: each trait below has one mistake, and each is reported.
use rpc_runtime::rpc;

#[rpc(namespce = "eth")]
pub trait UnknownKey {
    fn a(&self);
}

#[rpc(namespace = "")]
pub trait EmptyNamespace {
    fn a(&self);
}

#[rpc(rename_all = "camelcase")]
pub trait BadRenameRule {
    fn a(&self);
}

#[rpc(crate = "not a path")]
pub trait BadCratePath {
    fn a(&self);
}

#[rpc(namespace)]
pub trait NamespaceWithoutValue {
    fn a(&self);
}

#[rpc(namespace_separator = '.')]
pub trait SeparatorNotAString {
    fn a(&self);
}

#[rpc(rename_all = "camelCase", rename_all = "snake_case")]
pub trait DuplicateKey {
    fn a(&self);
}

#[rpc(server_only = true)]
pub trait ServerOnlyWithValue {
    fn a(&self);
}

fn main() {}
