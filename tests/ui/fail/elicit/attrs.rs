// Mistakes in `#[elicit(...)]`.
use rpc_runtime::mcp::Elicit;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
#[elicit(crat = "::rpc_runtime")]
pub struct Typo {
    confirm: bool,
}

#[derive(Deserialize, Elicit)]
#[elicit(crate = "not a path")]
pub struct NotAPath {
    confirm: bool,
}

#[derive(Deserialize, Elicit)]
pub struct OnAField {
    #[elicit(rename = "ok")]
    confirm: bool,
}

fn main() {}
