// A resource method's params are its URI template's variables, one for
// one (by wire name); a fixed resource and a resource list take none.
use rpc_runtime::{rpc, Context};

#[rpc]
pub trait Service {
    // `id` is no param.
    #[rpc(mcp(resource = "notes://{id}"))]
    fn missing_param(&self) -> String;

    // `rev` is no variable.
    #[rpc(mcp(resource = "notes://{id}/history"))]
    fn extra_param(&self, id: u64, rev: u32) -> String;

    // The variable matches the param's wire name, not its Rust name.
    #[rpc(mcp(resource = "files://{+file_path}"))]
    fn renamed(&self, #[rpc(name = "path")] file_path: String) -> String;

    // A fixed resource takes no params (a `Context` is no param).
    #[rpc(mcp(resource = "notes://index"))]
    fn fixed(&self, cx: Context, limit: u32) -> String;

    #[rpc(mcp(resource_list))]
    fn listed(&self, cx: Context, folder: String) -> Vec<String>;
}

fn main() {}
