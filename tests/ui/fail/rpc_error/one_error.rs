// One typo in #[derive(RpcError)], one error: the derive still writes its
// impls (the broken variant with a fallback message), so the conversion
// below, the #[rpc] trait returning the enum (its server, client and
// catalog) and the enum's use as an error add no errors of their own.
use rpc_runtime::{rpc, ErrorObject, RpcError};

#[derive(Debug, RpcError)]
pub enum StoreError {
    #[rpc(code = -32004, mesage = "Key not found")]
    NotFound { key: String },
    #[rpc(code = -32005, message = "Store is read-only")]
    ReadOnly,
}

#[rpc]
pub trait Store {
    fn get(&self, key: String) -> Result<String, StoreError>;
    async fn put(&self, key: String, value: String) -> Result<(), StoreError>;
}

struct Impl;

impl Store for Impl {
    fn get(&self, key: String) -> Result<String, StoreError> {
        Err(StoreError::NotFound { key })
    }
    async fn put(&self, _key: String, _value: String) -> Result<(), StoreError> {
        Err(StoreError::ReadOnly)
    }
}

fn main() {
    let error: ErrorObject = StoreError::ReadOnly.into();
    assert_eq!(error.code(), -32005);
    let _router = Impl.into_rpc();
    let _document = StoreCatalog::catalog().document();
    let _boxed: Box<dyn std::error::Error> = Box::new(StoreError::ReadOnly);
}
