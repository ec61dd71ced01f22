//! Generated items that users do not name (the spec table, the impls) sit
//! in `const _` blocks or in `into_rpc`'s body: two traits in one module
//! add only their trait, client, batch and catalog names beside the user's
//! items, so neither they nor user items of the old generated names
//! collide.

use rpc_runtime::{rpc, RpcError};

/// What the spec table was called before it moved into a block; a user
/// item of that name no longer collides.
#[allow(non_upper_case_globals)]
pub static __Orders_RPC_SPECS: u8 = 0;
/// Likewise the name every table now has inside its block.
pub static __RPC_SPECS: u8 = 1;

#[rpc]
pub trait Orders {
    fn place(&self, item: String) -> u64;
}

#[rpc(catalog = false)]
pub trait Refunds {
    fn place(&self, order: u64) -> bool;
}

#[rpc(namespace = "stock")]
pub trait Stock {
    fn place(&self, item: String) -> u64;
}

#[derive(Debug, RpcError)]
pub enum OrderError {
    #[rpc(code = -32010, message = "Sold out")]
    SoldOut,
}

#[derive(Debug, RpcError)]
pub enum RefundError {
    #[rpc(code = -32011, message = "Too late")]
    TooLate,
}

struct Shop;

impl Orders for Shop {
    fn place(&self, item: String) -> u64 {
        item.len() as u64
    }
}

impl Refunds for Shop {
    fn place(&self, order: u64) -> bool {
        order > 0
    }
}

impl Stock for Shop {
    fn place(&self, item: String) -> u64 {
        item.len() as u64 * 2
    }
}

fn main() {
    let mut router = Orders::into_rpc(Shop);
    router.merge(Stock::into_rpc(Shop)).unwrap();
    assert!(router.spec("place").is_some());
    assert!(router.spec("stock_place").is_some());
    assert_eq!(router.catalog().methods().count(), 2);
    assert!(Refunds::into_rpc(Shop).spec("place").is_some());
    assert_eq!(OrdersCatalog::service().methods[0].spec.name, "place");
    assert_eq!(StockCatalog::service().methods[0].spec.name, "stock_place");
    assert_eq!((__Orders_RPC_SPECS, __RPC_SPECS), (0, 1));
    assert_eq!(OrderError::SoldOut.to_string(), "Sold out");
    assert_eq!(RefundError::TooLate.to_string(), "Too late");
    let _ = |peer: rpc_runtime::Peer| (OrdersClient::new(peer.clone()), RefundsClient::new(peer));
}
