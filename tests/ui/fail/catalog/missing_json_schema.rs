use rpc_runtime::rpc;

#[derive(serde::Deserialize, serde::Serialize)]
pub struct Config {
    pub name: String,
}

// With `strict_schemas`, a type without `JsonSchema` is a compile error
// (without it, the catalog says "any value").
#[rpc(strict_schemas)]
pub trait Settings {
    fn set(&self, config: Config) -> bool;
    fn get(&self) -> Config;
}

fn main() {}
