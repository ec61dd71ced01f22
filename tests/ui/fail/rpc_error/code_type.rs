// A constant code must be an `i64`; the compiler says so at the constant.
use rpc_runtime::RpcError;

pub const NOT_FOUND: &str = "not found";

#[derive(Debug, RpcError)]
pub enum StoreError {
    #[rpc(code = NOT_FOUND, message = "Not found")]
    NotFound,
}

fn main() {}
