// `mime_type` goes with `resource`, as `type/subtype`.
use rpc_runtime::rpc;

#[rpc]
pub trait Service {
    #[rpc(mcp(mime_type = "text/markdown"))]
    fn without_resource(&self) -> String;

    #[rpc(mcp(resource = "notes://index", mime_type = "markdown"))]
    fn no_subtype(&self) -> String;

    #[rpc(mcp(resource = "notes://index", mime_type = "text/"))]
    fn empty_subtype(&self) -> String;

    #[rpc(mcp(resource = "notes://index", mime_type = "text/plain; charset=utf-8"))]
    fn whitespace(&self) -> String;

    #[rpc(mcp(resource = "notes://index", mime_type = text))]
    fn not_a_string(&self) -> String;
}

fn main() {}
