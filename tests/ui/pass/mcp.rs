// `#[rpc(mcp(...))]` in every form it takes; the catalog records it.
use rpc_runtime::{rpc, catalog::ToolInfo};

#[rpc]
pub trait Tools {
    #[rpc(mcp(title = "Add", read_only, idempotent = true, destructive = false, open_world = false))]
    fn add(&self, a: i64, b: i64) -> i64;

    #[rpc(mcp(hidden))]
    fn internal(&self);

    fn plain(&self);

    #[rpc(name = "items.list", mcp(name = "list_items"))]
    fn list(&self) -> Vec<u8>;
}

fn main() {
    let service = ToolsCatalog::service();
    let tool = |index: usize| service.methods[index].tool;
    let add = tool(0);
    assert!(!add.hidden);
    assert_eq!((add.name, add.title), (None, Some("Add")));
    assert_eq!(
        (add.read_only, add.destructive, add.idempotent, add.open_world),
        (Some(true), Some(false), Some(true), Some(false))
    );
    assert!(tool(1).hidden);
    assert_eq!(tool(2), ToolInfo::DEFAULT);
    assert_eq!(tool(3).name, Some("list_items"));
    assert_eq!(service.methods[3].spec.name, "items.list");
}
