// A form is one concrete schema: no type or lifetime parameters.
use rpc_runtime::mcp::Elicit;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
pub struct Form<T> {
    value: T,
}

#[derive(Deserialize, Elicit)]
pub struct Borrowed<'a> {
    name: &'a str,
}

fn main() {}
