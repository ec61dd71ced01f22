// The derived `std::error::Error` needs `Debug`; its absence is reported
// at the enum's name.
use rpc_runtime::RpcError;

#[derive(RpcError)]
pub enum StoreError {
    #[rpc(code = -32004, message = "Not found")]
    NotFound,
}

fn main() {}
