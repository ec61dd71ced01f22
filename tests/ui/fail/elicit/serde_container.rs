// serde attributes on the struct that read it as something other than an
// object of its own fields.
use rpc_runtime::mcp::Elicit;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
#[serde(transparent)]
pub struct Name {
    name: String,
}

#[derive(Deserialize)]
pub struct Raw {
    value: String,
}

impl From<Raw> for Converted {
    fn from(raw: Raw) -> Self {
        Converted { value: raw.value }
    }
}

impl TryFrom<Raw> for Checked {
    type Error = String;
    fn try_from(raw: Raw) -> Result<Self, String> {
        Ok(Checked { value: raw.value })
    }
}

#[derive(Deserialize, Elicit)]
#[serde(from = "Raw")]
pub struct Converted {
    value: String,
}

#[derive(Deserialize, Elicit)]
#[serde(try_from = "Raw")]
pub struct Checked {
    value: String,
}

fn main() {}
