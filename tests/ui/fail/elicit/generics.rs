// A form or a choice is one concrete schema: no type, lifetime or const
// parameters.
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

#[derive(Deserialize, Elicit)]
pub enum Level<const N: usize> {
    Low,
    High,
}

#[derive(Deserialize, Elicit)]
pub enum Kind<T> {
    Small,
    #[serde(skip)]
    Other(T),
}

fn main() {}
