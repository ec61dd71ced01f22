// The bounds a generic trait's generated code needs are added where it
// needs them: on `into_rpc` (serving), the client and the catalog. An
// instantiation whose types lack one is reported where that side is used,
// with the type, the side and why.
use rpc_runtime::rpc;

#[rpc]
pub trait Store<T, E> {
    fn get(&self, key: T) -> Result<T, E>;
}

/// Nothing: not `Serialize`, `Deserialize`, `JsonSchema`, nor an error.
pub struct Opaque;

struct Impl;

// Implementing the trait asks nothing of the types.
impl Store<Opaque, Opaque> for Impl {
    fn get(&self, key: Opaque) -> Result<Opaque, Opaque> {
        Ok(key)
    }
}

fn main() {
    let _ = Impl.into_rpc();
    let _ = StoreClient::<Opaque, Opaque>::new;
    let _ = StoreCatalog::<Opaque, Opaque>::catalog();
}
