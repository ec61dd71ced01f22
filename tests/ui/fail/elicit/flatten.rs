// `#[serde(flatten)]` nests an object in the form: MCP forms are flat.
use rpc_runtime::mcp::Elicit;
use serde::Deserialize;

#[derive(Deserialize)]
pub struct Address {
    street: String,
    city: String,
}

#[derive(Deserialize, Elicit)]
pub struct Order {
    quantity: u32,
    #[serde(flatten)]
    address: Address,
}

fn main() {}
