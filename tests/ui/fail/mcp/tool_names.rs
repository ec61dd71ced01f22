// `#[rpc(mcp(name = "..."))]`: tool names model APIs take
// (`[a-zA-Z0-9_-]{1,64}`), one tool per name, and no name for what is no
// tool.
use rpc_runtime::{rpc, SubscriptionSink};

#[rpc]
pub trait Service {
    #[rpc(mcp(name = "items.list"))]
    fn dotted(&self) -> u8;

    #[rpc(mcp(name = ""))]
    fn empty(&self) -> u8;

    #[rpc(mcp(name = "a_name_that_goes_on_and_on_well_past_the_sixty_four_characters_allowed"))]
    fn too_long(&self) -> u8;

    #[rpc(mcp(name = 5))]
    fn not_a_string(&self) -> u8;

    #[rpc(mcp(name = "add"))]
    fn plus(&self) -> u8;

    fn add(&self) -> u8;

    #[rpc(mcp(hidden, name = "secret"))]
    fn hidden_with_name(&self) -> u8;

    #[rpc(unsubscribe = "stop", mcp(name = "ticks"))]
    async fn ticks(&self, sink: SubscriptionSink<u64>);
}

fn main() {}
