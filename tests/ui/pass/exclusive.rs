// `exclusive` on every kind of method that ends: an `async fn`, a plain
// `fn`, a blocking one, a notification; the spec says so.
use rpc_runtime::{rpc, Router};

#[rpc]
pub trait Documents {
    #[rpc(exclusive, notification)]
    async fn change(&self, text: String);

    #[rpc(exclusive)]
    fn close(&self) -> u32;

    #[rpc(exclusive, blocking)]
    fn save(&self) -> u32;

    async fn hover(&self) -> u32;
}

struct Docs;

impl Documents for Docs {
    async fn change(&self, _text: String) {}
    fn close(&self) -> u32 {
        1
    }
    fn save(&self) -> u32 {
        2
    }
    async fn hover(&self) -> u32 {
        3
    }
}

fn main() {
    let router: Router = Docs.into_rpc();
    let exclusive = |name: &str| router.spec(name).map(|spec| spec.exclusive);
    assert_eq!(exclusive("change"), Some(true));
    assert_eq!(exclusive("close"), Some(true));
    assert_eq!(exclusive("save"), Some(true));
    assert_eq!(exclusive("hover"), Some(false));
}
