// Mistakes in #[derive(RpcError)], all reported in one build.
use rpc_runtime::RpcError;

#[derive(RpcError)]
pub struct NotAnEnum;

#[derive(RpcError)]
pub enum Generic<T> {
    #[rpc(code = 1, message = "x")]
    A(T),
}

#[derive(RpcError)]
pub enum Mistakes {
    NoAttribute,
    #[rpc(code = 1)]
    NoMessage,
    #[rpc(cod = 1, message = "typo")]
    UnknownKey,
    #[rpc(code = "1", message = "string code")]
    StringCode,
    #[rpc(code = 1 + 1, message = "expression code")]
    ExpressionCode,
}

#[derive(RpcError)]
#[rpc(crates = "x")]
pub enum UnknownEnumKey {
    #[rpc(code = 1, message = "x")]
    A,
}

#[derive(RpcError)]
#[rpc(display = "no")]
pub enum DisplayNotABool {
    #[rpc(code = 1, message = "x")]
    A,
}

fn main() {}
