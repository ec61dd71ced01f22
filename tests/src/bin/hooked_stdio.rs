//! A stdio server with a connection hook, for `tests/server_connections.rs`:
//! the hook attaches the user named by `HOOK_USER`, or refuses the
//! connection when it is unset (the process then exits with an error).

use rpc_runtime::{rpc, Context, Refused, Server};

/// Tells the caller who it is.
#[rpc]
pub trait Whoami {
    /// The user the connection hook attached.
    fn whoami(&self, cx: Context) -> Option<String>;
}

struct User(String);

struct WhoamiImpl;

impl Whoami for WhoamiImpl {
    fn whoami(&self, cx: Context) -> Option<String> {
        cx.extension::<User>().map(|user| user.0.clone())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    Server::new(WhoamiImpl.into_rpc())
        .on_connect(|info, cx| {
            assert_eq!(info.transport(), "stdio");
            match std::env::var("HOOK_USER") {
                Ok(user) => Ok(cx.with_extension(User(user))),
                Err(_) => Err(Refused::unauthorized("no HOOK_USER")),
            }
        })
        .serve(rpc_runtime::transport::stdio::Stdio)
        .await
}
