use rpc_runtime::rpc;

#[derive(serde::Deserialize, serde::Serialize)]
pub struct Config {
    pub name: String,
}

#[rpc]
pub trait Settings {
    fn set(&self, config: Config) -> bool;
    fn get(&self) -> Config;
}

fn main() {}
