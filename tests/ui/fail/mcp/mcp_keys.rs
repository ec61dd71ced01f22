// `#[rpc(mcp(...))]`: a method's MCP tool. Every mistake in one trait is
// reported in one build.
use rpc_runtime::rpc;

#[rpc]
pub trait Service {
    #[rpc(mcp(titel = "Add"))]
    fn unknown_key(&self);

    #[rpc(mcp)]
    fn no_parentheses(&self);

    #[rpc(mcp(title = 5))]
    fn title_not_a_string(&self);

    #[rpc(mcp(title = " "))]
    fn empty_title(&self);

    #[rpc(mcp(read_only = "yes"))]
    fn hint_not_a_bool(&self);

    #[rpc(mcp(idempotent, idempotent = false))]
    fn hint_twice(&self);

    #[rpc(mcp(hidden, title = "Secret"))]
    fn hidden_with_title(&self);

    #[rpc(mcp(hidden = true))]
    fn hidden_with_value(&self);

    #[rpc(notification, mcp(title = "Poke"))]
    fn notification_tool(&self);

    #[rpc(mcp(hidden), mcp(read_only))]
    fn mcp_twice(&self);
}

fn main() {}
