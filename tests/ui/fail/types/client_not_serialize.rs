// A param type the client cannot encode (the server decodes it, so only
// the client fails) is reported at the param's type; `#[rpc(server_only)]`
// is the way out.
use rpc_runtime::rpc;
use rpc_runtime::serde::Deserialize;

#[derive(Deserialize)]
#[serde(crate = "rpc_runtime::serde")]
pub struct Query {
    pub text: String,
}

#[rpc(catalog = false)] // only the client's serde bounds are under test here
pub trait Index {
    fn search(&self, query: Query) -> usize;
    async fn search_async(&self, first: u8, query: Option<Query>);
    #[rpc(notification)]
    fn hint(&self, query: Query);
}

fn main() {}
