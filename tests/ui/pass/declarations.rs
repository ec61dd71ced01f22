// `strict_schemas` with types that have schemas, aliases, and an error type
// declared with `#[derive(RpcError)]` through a renamed runtime path.
use rpc_runtime::schemars::JsonSchema;
use rpc_runtime::{rpc, RpcError};

mod facade {
    pub use rpc_runtime as rpc;
}

#[derive(rpc_runtime::serde::Serialize, rpc_runtime::serde::Deserialize, JsonSchema)]
#[serde(crate = "rpc_runtime::serde")]
#[schemars(crate = "rpc_runtime::schemars")]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

#[derive(Debug, RpcError)]
#[rpc(crate = "facade::rpc")]
pub enum GeoError {
    #[rpc(code = -32001, message = "Off the map")]
    OffTheMap { x: f64, y: f64 },
}

#[rpc(strict_schemas)]
pub trait Geo {
    #[rpc(alias = "move", alias = "shift")]
    fn translate(&self, point: Point, by: f64) -> Result<Point, GeoError>;
}

fn main() {
    let names: Vec<&str> = GeoCatalog::catalog().methods().map(|m| m.spec.name).collect();
    assert_eq!(names, ["translate", "move", "shift"]);
}
