// What `complete(...)` completes is declared in the same trait, and the
// completion method takes the partial value (and maybe the other
// arguments).
use std::collections::HashMap;

use rpc_runtime::rpc;

#[rpc(namespace = "notes")]
pub trait Service {
    #[rpc(mcp(prompt))]
    fn review(&self, code: String, language: String) -> String;

    #[rpc(mcp(resource = "notes://{id}"))]
    fn note(&self, id: u64) -> String;

    #[rpc(mcp(resource = "notes://index"))]
    fn index(&self) -> String;

    // The prompt is named as the runtime offers it: `notes_review`.
    #[rpc(mcp(complete(prompt = "review", argument = "language")))]
    fn no_such_prompt(&self, value: String) -> Vec<String>;

    #[rpc(mcp(complete(prompt = "notes_review", argument = "lang")))]
    fn no_such_argument(&self, value: String) -> Vec<String>;

    #[rpc(mcp(complete(resource = "notes://{key}", argument = "key")))]
    fn no_such_template(&self, value: String) -> Vec<String>;

    #[rpc(mcp(complete(resource = "notes://{id}", argument = "key")))]
    fn no_such_variable(&self, value: String) -> Vec<String>;

    #[rpc(mcp(complete(resource = "notes://index", argument = "id")))]
    fn fixed_resource(&self, value: String) -> Vec<String>;

    #[rpc(mcp(complete(prompt = "notes_review", argument = "code")))]
    fn no_value(&self) -> Vec<String>;

    #[rpc(mcp(complete(resource = "notes://{id}", argument = "id")))]
    fn three_params(&self, value: String, arguments: HashMap<String, String>, limit: u32) -> Vec<String>;

    #[rpc(mcp(complete(prompt = "notes_review", argument = "language")))]
    fn languages(&self, value: String) -> Vec<String>;

    #[rpc(mcp(complete(prompt = "notes_review", argument = "language")))]
    fn more_languages(&self, value: String) -> Vec<String>;
}

fn main() {}
