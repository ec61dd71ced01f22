// #[derive(Elicit)] on what is neither a flat object of named fields (a
// form) nor an enum of unit variants (a choice).
use rpc_runtime::mcp::Elicit;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
pub enum Answer {
    Yes,
    No,
    Other(String),
    Later { days: u32 },
}

// The choice's impl is rendered despite its errors: a form of it adds none.
#[derive(Deserialize, Elicit)]
pub struct Reply {
    answer: Answer,
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
