// A `#[derive(RpcError)]` type is a `std::error::Error`, so a typed call's
// `ClientError<E>` goes into `Box<dyn Error + Send + Sync>` (or
// `anyhow::Error`) with `?`.
use std::error::Error;

use rpc_runtime::{rpc, ClientError, RpcError};

#[derive(Debug, RpcError)]
pub enum StoreError {
    #[rpc(code = -32004, message = "Key not found")]
    NotFound { key: String },
}

#[rpc]
pub trait Store {
    fn get(&self, key: String) -> Result<i64, StoreError>;
}

async fn read(store: &StoreClient) -> Result<i64, Box<dyn Error + Send + Sync>> {
    let value = store.get("answer".to_owned()).await?;
    Ok(value)
}

fn boxed(err: ClientError<StoreError>) -> Result<(), Box<dyn Error + Send + Sync + 'static>> {
    Err(err)?
}

fn main() {
    let _ = read;
    let err = boxed(ClientError::App(StoreError::NotFound { key: "k".to_owned() })).unwrap_err();
    assert_eq!(err.to_string(), "the method failed: Key not found");
}
