// `complete(prompt = "..", argument = "..")` or
// `complete(resource = "..", argument = "..")`, written so.
use rpc_runtime::rpc;

#[rpc]
pub trait Service {
    #[rpc(mcp(complete = "review"))]
    fn no_parentheses(&self, value: String) -> Vec<String>;

    #[rpc(mcp(complete(prompt = "review", argument = "language", arg = "code")))]
    fn unknown_key(&self, value: String) -> Vec<String>;

    #[rpc(mcp(complete(prompt = "review", resource = "notes://{id}", argument = "id")))]
    fn both_targets(&self, value: String) -> Vec<String>;

    #[rpc(mcp(complete(argument = "language")))]
    fn no_target(&self, value: String) -> Vec<String>;

    #[rpc(mcp(complete(prompt = "review")))]
    fn no_argument(&self, value: String) -> Vec<String>;

    #[rpc(mcp(complete(prompt = review, argument = "language")))]
    fn not_a_string(&self, value: String) -> Vec<String>;

    #[rpc(mcp(complete(prompt = "review", argument = "language", argument = "code")))]
    fn argument_twice(&self, value: String) -> Vec<String>;
}

fn main() {}
