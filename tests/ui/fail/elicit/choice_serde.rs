// serde attributes that make serde read an enum from something other than
// one of its variants' names: a choice cannot list what the user may pick.
use rpc_runtime::mcp::Elicit;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
#[serde(untagged)]
pub enum Untagged {
    Low,
    High,
}

#[derive(Deserialize, Elicit)]
#[serde(tag = "level")]
pub enum Internal {
    Low,
    High,
}

#[derive(Deserialize, Elicit)]
#[serde(tag = "level", content = "value")]
pub enum Adjacent {
    Low,
    High,
}

#[derive(Deserialize, Elicit)]
pub enum Other {
    Low,
    High,
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize, Elicit)]
pub enum UntaggedVariant {
    Low,
    High,
    #[serde(untagged)]
    Unknown,
}

impl From<String> for Converted {
    fn from(_: String) -> Self {
        Converted::Low
    }
}

#[derive(Deserialize, Elicit)]
#[serde(from = "String")]
pub enum Converted {
    Low,
    High,
}

fn main() {}
