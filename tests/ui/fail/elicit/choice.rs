// Enums that are not a choice of names: no variants, every variant
// skipped, `#[elicit]` on a variant, an unknown `#[elicit]` key.
use rpc_runtime::mcp::Elicit;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
pub enum Never {}

#[derive(Deserialize, Elicit)]
pub enum AllSkipped {
    #[serde(skip)]
    Low,
    #[serde(skip_deserializing)]
    High,
}

#[derive(Deserialize, Elicit)]
pub enum OnAVariant {
    #[elicit(rename = "low")]
    Low,
    High,
}

#[derive(Deserialize, Elicit)]
#[elicit(crat = "::rpc_runtime")]
pub enum Typo {
    Low,
    High,
}

fn main() {}
