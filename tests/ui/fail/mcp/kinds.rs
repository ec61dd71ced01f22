// A method is one thing over MCP (a tool, a resource, a resource list, a
// prompt or a completion), and takes only the keys that describe it.
use rpc_runtime::{rpc, SubscriptionSink};

#[rpc]
pub trait Service {
    #[rpc(mcp(resource = "notes://index", prompt))]
    fn two_kinds(&self) -> String;

    #[rpc(mcp(prompt, read_only))]
    fn hint_on_prompt(&self) -> String;

    #[rpc(mcp(resource = "notes://index", idempotent = false))]
    fn hint_on_resource(&self) -> String;

    #[rpc(mcp(resource_list, name = "all"))]
    fn name_on_list(&self) -> Vec<String>;

    #[rpc(mcp(title = "Languages", complete(prompt = "review", argument = "language")))]
    fn title_on_completion(&self, value: String) -> Vec<String>;

    #[rpc(mcp(prompt, title = ""))]
    fn empty_title(&self) -> String;

    #[rpc(mcp(hidden, prompt))]
    fn hidden_prompt(&self) -> String;

    #[rpc(mcp(prompt = true))]
    fn prompt_with_value(&self) -> String;

    #[rpc(mcp(resource_list()))]
    fn list_with_value(&self) -> Vec<String>;

    #[rpc(mcp(promt))]
    fn typo(&self) -> String;

    #[rpc(notification, mcp(prompt))]
    fn notification_prompt(&self);

    #[rpc(unsubscribe = "unsubscribe_ticks", mcp(resource = "ticks://all"))]
    async fn ticks(&self, sink: SubscriptionSink<u64>);

    #[rpc(mcp(prompt))]
    fn review(&self, language: String) -> String;
}

fn main() {}
