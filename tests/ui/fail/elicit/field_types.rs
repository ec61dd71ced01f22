// Field types a form cannot hold: each is reported at the type, with
// what a form may hold.
use rpc_runtime::mcp::Elicit;
use serde::Deserialize;

#[derive(Deserialize)]
pub struct Address {
    street: String,
}

#[derive(Deserialize, Elicit)]
pub struct Order {
    quantity: u32,
    tags: Vec<String>,
    address: Address,
    #[serde(default)]
    note: Option<Vec<String>>,
}

fn main() {}
