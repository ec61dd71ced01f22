// #[derive(Elicit)] on what is not a flat object of named fields.
use rpc_runtime::mcp::Elicit;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
pub enum Choice {
    Yes,
    No,
}

#[derive(Elicit)]
pub union Bits {
    int: u32,
    float: f32,
}

#[derive(Deserialize, Elicit)]
pub struct Confirm(bool);

#[derive(Deserialize, Elicit)]
pub struct Nothing;

fn main() {}
