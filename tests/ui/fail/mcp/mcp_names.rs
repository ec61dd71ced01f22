// One prompt per name and one resource per URI (names are per kind), and
// names clients can ask for.
use rpc_runtime::rpc;

#[rpc]
pub trait Service {
    #[rpc(mcp(prompt, name = "review"))]
    fn review_code(&self, code: String) -> String;

    #[rpc(mcp(prompt))]
    fn review(&self, text: String) -> String;

    // Only tools count as tools: a prompt named `summary` is no duplicate.
    #[rpc(mcp(prompt, name = "summary"))]
    fn summary_prompt(&self) -> String;

    #[rpc(mcp(name = "summary"))]
    fn summary(&self) -> String;

    #[rpc(mcp(resource = "notes://{id}"))]
    fn note(&self, id: u64) -> String;

    #[rpc(mcp(resource = "notes://{id}"))]
    fn note_text(&self, id: u64) -> String;

    #[rpc(mcp(prompt, name = ""))]
    fn nameless_prompt(&self) -> String;

    #[rpc(mcp(resource = "notes://index", name = " index"))]
    fn padded_resource(&self) -> String;

    // A prompt's name is no tool name: a dot is fine.
    #[rpc(mcp(prompt, name = "notes.review"))]
    fn dotted_prompt(&self) -> String;
}

fn main() {}
