// A derived `Display` beside the user's own: `#[rpc(display = false)]` is
// the way out, and the compiler's "conflicting implementations" is where a
// user meets it.
use rpc_runtime::RpcError;

#[derive(Debug, RpcError)]
pub enum StoreError {
    #[rpc(code = -32004, message = "Not found")]
    NotFound,
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not found")
    }
}

fn main() {}
