// `#[rpc(mcp(resource = "..."))]`: an absolute URI, or a URI template
// whose only expressions are `{var}` and `{+var}`, each variable once and
// no two side by side.
use rpc_runtime::rpc;

#[rpc]
pub trait Service {
    #[rpc(mcp(resource = 5))]
    fn not_a_string(&self) -> String;

    #[rpc(mcp(resource = "notes/{id}"))]
    fn no_scheme(&self, id: u64) -> String;

    #[rpc(mcp(resource = "notes://{id"))]
    fn unclosed(&self, id: u64) -> String;

    #[rpc(mcp(resource = "notes://id}"))]
    fn stray_close(&self) -> String;

    #[rpc(mcp(resource = "notes://{{id}}"))]
    fn nested(&self, id: u64) -> String;

    #[rpc(mcp(resource = "notes://search{?q}"))]
    fn query_operator(&self, q: String) -> String;

    #[rpc(mcp(resource = "notes://{/path}"))]
    fn path_operator(&self, path: String) -> String;

    #[rpc(mcp(resource = "notes://{id*}"))]
    fn explode_modifier(&self, id: u64) -> String;

    #[rpc(mcp(resource = "notes://{id:3}"))]
    fn prefix_modifier(&self, id: u64) -> String;

    #[rpc(mcp(resource = "notes://{a,b}"))]
    fn list(&self, a: u64, b: u64) -> String;

    #[rpc(mcp(resource = "notes://{}"))]
    fn empty(&self) -> String;

    #[rpc(mcp(resource = "notes://{id}/{id}"))]
    fn twice(&self, id: u64) -> String;

    #[rpc(mcp(resource = "notes://{folder}{+path}"))]
    fn adjacent(&self, folder: String, path: String) -> String;
}

fn main() {}
