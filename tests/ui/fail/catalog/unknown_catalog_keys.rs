use rpc_runtime::rpc;

#[rpc(titel = "Settings")]
pub trait Settings {
    #[rpc(error(code = -32001, text = "Not found"))]
    fn get(&self) -> bool;

    #[rpc(error(code = "x", message = "Bad"))]
    fn put(&self) -> bool;

    #[rpc(error(code = 1))]
    fn del(&self) -> bool;
}

fn main() {}
