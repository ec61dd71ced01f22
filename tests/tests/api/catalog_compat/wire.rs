//! The verdicts agree with the server: for pairs of real trait versions,
//! calls an old caller makes (built from the old catalog: every param's
//! edge values, by position and by name, optional params given and left
//! out) go to the new version's server in process. When the report says
//! nothing breaks, every such call must still be taken; when it says
//! something breaks, at least one must be refused.

use rpc_runtime::catalog::compat::compare;
use rpc_runtime::schemars::JsonSchema;
use rpc_runtime::serde::Deserialize;
use rpc_runtime::{dispatch::Engine, rpc, Context, Limits, Router};
use serde_json::{json, Map, Value};

// Only the catalogs and servers of these traits are used.
#[allow(dead_code)]
mod versions {
    use super::*;

    #[rpc]
    pub trait Base {
        fn f(&self, a: i64, b: Option<String>) -> i64;
    }
    #[rpc]
    pub trait OptionalAtEnd {
        fn f(&self, a: i64, b: Option<String>, c: Option<bool>) -> i64;
    }
    #[rpc]
    pub trait RequiredAdded {
        fn f(&self, a: i64, b: Option<String>, c: bool) -> i64;
    }
    #[rpc]
    pub trait OptionalInTheMiddle {
        fn f(&self, a: i64, c: Option<i64>, b: Option<String>) -> i64;
    }
    #[rpc]
    pub trait Renamed {
        fn f(&self, a: i64, text: Option<String>) -> i64;
    }
    #[rpc]
    pub trait Reordered {
        fn f(&self, b: Option<String>, a: i64) -> i64;
    }
    #[rpc]
    pub trait ByNameOnly {
        #[rpc(param_structure = "by-name")]
        fn f(&self, a: i64, b: Option<String>) -> i64;
    }
    #[rpc]
    pub trait Narrowed {
        fn f(&self, a: i32, b: Option<String>) -> i64;
    }
    #[rpc]
    pub trait Widened {
        fn f(&self, a: f64, b: Option<String>) -> i64;
    }
    #[rpc]
    pub trait MadeOptional {
        fn f(&self, a: Option<i64>, b: Option<String>) -> i64;
    }
    #[rpc]
    pub trait MadeRequired {
        fn f(&self, a: i64, b: String) -> i64;
    }
    #[rpc]
    pub trait RemovedExtraAllowed {
        #[rpc(allow_extra_params)]
        fn f(&self, a: i64) -> i64;
    }
    #[rpc]
    pub trait Removed {
        fn f(&self, a: i64) -> i64;
    }
    #[rpc(server_only)] // param types are Deserialize only
    pub trait WholeStruct {
        #[rpc(whole_params)]
        fn f(&self, params: FParams) -> i64;
    }
    #[rpc]
    pub trait Alias {
        #[rpc(alias = "f")]
        fn g(&self, a: i64, b: Option<String>) -> i64;
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(crate = "rpc_runtime::serde", deny_unknown_fields)]
    #[schemars(crate = "rpc_runtime::schemars")]
    pub struct FParams {
        pub a: i64,
        pub b: Option<String>,
    }

    #[rpc(server_only)] // param types are Deserialize only
    pub trait Shapes {
        fn h(&self, p: Point) -> i64;
    }
    #[rpc(server_only)] // param types are Deserialize only
    pub trait ShapesOptionalField {
        fn h(&self, p: PointZ) -> i64;
    }
    #[rpc(server_only)] // param types are Deserialize only
    pub trait ShapesRequiredField {
        fn h(&self, p: PointRequiredZ) -> i64;
    }
    #[rpc(server_only)] // param types are Deserialize only
    pub trait ShapesClosed {
        fn h(&self, p: PointClosed) -> i64;
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(crate = "rpc_runtime::serde")]
    #[schemars(crate = "rpc_runtime::schemars")]
    pub struct Point {
        pub x: i64,
        pub y: i64,
        pub label: Option<String>,
    }
    #[derive(Deserialize, JsonSchema)]
    #[serde(crate = "rpc_runtime::serde")]
    #[schemars(crate = "rpc_runtime::schemars", rename = "Point")]
    pub struct PointZ {
        pub x: i64,
        pub y: i64,
        pub label: Option<String>,
        pub z: Option<i64>,
    }
    #[derive(Deserialize, JsonSchema)]
    #[serde(crate = "rpc_runtime::serde")]
    #[schemars(crate = "rpc_runtime::schemars")]
    pub struct PointRequiredZ {
        pub x: i64,
        pub y: i64,
        pub label: Option<String>,
        pub z: i64,
    }
    #[derive(Deserialize, JsonSchema)]
    #[serde(crate = "rpc_runtime::serde", deny_unknown_fields)]
    #[schemars(crate = "rpc_runtime::schemars")]
    pub struct PointClosed {
        pub x: i64,
        pub y: i64,
    }

    #[rpc(server_only)] // param types are Deserialize only
    pub trait Paint {
        fn k(&self, color: Color) -> i64;
    }
    #[rpc(server_only)] // param types are Deserialize only
    pub trait PaintFewer {
        fn k(&self, color: ColorFewer) -> i64;
    }
    #[rpc(server_only)] // param types are Deserialize only
    pub trait PaintMore {
        fn k(&self, color: ColorMore) -> i64;
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(crate = "rpc_runtime::serde")]
    #[schemars(crate = "rpc_runtime::schemars")]
    pub enum Color {
        Red,
        Green,
        Custom { hex: String },
    }
    #[derive(Deserialize, JsonSchema)]
    #[serde(crate = "rpc_runtime::serde")]
    #[schemars(crate = "rpc_runtime::schemars", rename = "Color")]
    pub enum ColorFewer {
        Red,
        Custom { hex: String },
    }
    #[derive(Deserialize, JsonSchema)]
    #[serde(crate = "rpc_runtime::serde")]
    #[schemars(crate = "rpc_runtime::schemars", rename = "Color")]
    pub enum ColorMore {
        Red,
        Green,
        Blue,
        Custom { hex: String },
        Named { name: String },
    }

    /// Serves every version; the answers do not matter here.
    pub struct Server;

    macro_rules! serve_f {
        ($($version:ident($($param:ident: $ty:ty),*)),* $(,)?) => {$(
            impl $version for Server {
                fn f(&self, $($param: $ty),*) -> i64 {
                    $(let _ = $param;)*
                    0
                }
            }
        )*};
    }

    serve_f! {
        Base(a: i64, b: Option<String>),
        OptionalAtEnd(a: i64, b: Option<String>, c: Option<bool>),
        RequiredAdded(a: i64, b: Option<String>, c: bool),
        OptionalInTheMiddle(a: i64, c: Option<i64>, b: Option<String>),
        Renamed(a: i64, text: Option<String>),
        Reordered(b: Option<String>, a: i64),
        ByNameOnly(a: i64, b: Option<String>),
        Narrowed(a: i32, b: Option<String>),
        Widened(a: f64, b: Option<String>),
        MadeOptional(a: Option<i64>, b: Option<String>),
        MadeRequired(a: i64, b: String),
        RemovedExtraAllowed(a: i64),
        Removed(a: i64),
        WholeStruct(params: FParams),
    }

    impl Alias for Server {
        fn g(&self, _: i64, _: Option<String>) -> i64 {
            0
        }
    }
    impl Paint for Server {
        fn k(&self, _: Color) -> i64 {
            0
        }
    }
    impl PaintFewer for Server {
        fn k(&self, _: ColorFewer) -> i64 {
            0
        }
    }
    impl PaintMore for Server {
        fn k(&self, _: ColorMore) -> i64 {
            0
        }
    }
    impl Shapes for Server {
        fn h(&self, _: Point) -> i64 {
            0
        }
    }
    impl ShapesOptionalField for Server {
        fn h(&self, _: PointZ) -> i64 {
            0
        }
    }
    impl ShapesRequiredField for Server {
        fn h(&self, _: PointRequiredZ) -> i64 {
            0
        }
    }
    impl ShapesClosed for Server {
        fn h(&self, _: PointClosed) -> i64 {
            0
        }
    }
}

use versions::*;

/// A version: its catalog and a router serving it.
struct Version {
    name: &'static str,
    document: Value,
    router: fn() -> Router,
}

macro_rules! version {
    ($trait:ident, $catalog:ident) => {
        Version {
            name: stringify!($trait),
            document: serde_json::to_value($catalog::catalog().document()).expect("a document"),
            router: || <Server as $trait>::into_rpc(Server),
        }
    };
}

/// The ranges of the integer formats schemars writes.
fn integer_edges(schema: &Map<String, Value>) -> Vec<Value> {
    let (min, max): (Value, Value) = match schema.get("format").and_then(Value::as_str) {
        Some("int32") => (i32::MIN.into(), i32::MAX.into()),
        Some("uint32") => (0.into(), u32::MAX.into()),
        Some("uint64") => (0.into(), u64::MAX.into()),
        Some("uint8") => (0.into(), u8::MAX.into()),
        _ => (i64::MIN.into(), i64::MAX.into()),
    };
    vec![json!(0), min, max]
}

/// Edge values a schema accepts (of the subset these traits emit).
fn samples(doc: &Value, schema: &Value, depth: usize) -> Vec<Value> {
    if depth > 8 {
        return vec![Value::Null];
    }
    if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
        let target = doc.pointer(target.trim_start_matches('#')).expect("a resolvable $ref");
        return samples(doc, target, depth + 1);
    }
    let Some(schema) = schema.as_object() else { return vec![json!(0), json!("x"), Value::Null] };
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values.clone();
    }
    if let Some(value) = schema.get("const") {
        return vec![value.clone()];
    }
    if let Some(branches) = schema.get("anyOf").or_else(|| schema.get("oneOf")).and_then(Value::as_array) {
        return branches.iter().flat_map(|branch| samples(doc, branch, depth + 1)).collect();
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(ty)) => vec![ty.as_str()],
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).collect(),
        _ => vec!["integer", "string", "null"],
    };
    types
        .into_iter()
        .flat_map(|ty| match ty {
            "integer" => integer_edges(schema),
            "number" => vec![json!(0.5), json!(-1e300)],
            "string" => vec![json!(""), json!("x")],
            "boolean" => vec![json!(true)],
            "null" => vec![Value::Null],
            "object" => objects(doc, schema, depth),
            _ => vec![json!([])],
        })
        .collect()
}

/// An object with its required properties, and one with all of them.
fn objects(doc: &Value, schema: &Map<String, Value>, depth: usize) -> Vec<Value> {
    let empty = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map_or_else(Vec::new, |names| names.iter().filter_map(Value::as_str).collect());
    let first = |property: &Value| samples(doc, property, depth + 1).into_iter().next().unwrap_or(Value::Null);
    let all: Map<String, Value> = properties.iter().map(|(name, property)| (name.clone(), first(property))).collect();
    let least: Map<String, Value> =
        all.iter().filter(|(name, _)| required.contains(&name.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect();
    vec![Value::Object(least), Value::Object(all)]
}

/// Every `params` value an old caller may send to `method` (by the old
/// document): each param's edge values in turn, the others at their
/// first; by position and by name as the method takes them; optional
/// params given and left out.
fn old_calls(doc: &Value, method: &Value) -> Vec<Value> {
    let params = method["params"].as_array().expect("params");
    let options: Vec<Vec<Value>> = params.iter().map(|param| samples(doc, &param["schema"], 0)).collect();
    if method["x-whole-params"] == true {
        return options.into_iter().flatten().collect();
    }
    let mut rows: Vec<Vec<Value>> = Vec::new();
    let firsts: Vec<Value> = options.iter().map(|values| values[0].clone()).collect();
    for (index, values) in options.iter().enumerate() {
        for value in values {
            let mut row = firsts.clone();
            row[index] = value.clone();
            rows.push(row);
        }
    }
    let structure = method["paramStructure"].as_str().unwrap_or("either");
    let optional = |index: usize| params[index]["required"] != true;
    let mut calls = Vec::new();
    for row in rows {
        if structure != "by-name" {
            calls.push(Value::from(row.clone()));
            let kept = (0..row.len()).rposition(|index| !optional(index)).map_or(0, |last| last + 1);
            calls.push(Value::from(row[..kept].to_vec()));
        }
        if structure != "by-position" {
            let named = |keep: &dyn Fn(usize) -> bool| {
                let members: Map<String, Value> = row
                    .iter()
                    .enumerate()
                    .filter(|(index, _)| keep(*index))
                    .map(|(index, value)| (params[index]["name"].as_str().expect("a name").to_owned(), value.clone()))
                    .collect();
                Value::Object(members)
            };
            calls.push(named(&|_| true));
            calls.push(named(&|index| !optional(index)));
        }
    }
    calls
}

/// The calls of `old`'s callers that `new`'s server refuses.
async fn refused(old: &Version, new: &Version) -> Vec<String> {
    let engine = Engine::new((new.router)(), Limits::default());
    let mut refused = Vec::new();
    for method in old.document["methods"].as_array().expect("methods") {
        let name = method["name"].as_str().expect("a name");
        for params in old_calls(&old.document, method) {
            let request = json!({"jsonrpc": "2.0", "method": name, "params": params, "id": 1});
            let out = engine.handle(request.to_string().as_bytes(), &Context::default()).await;
            let response: Value = serde_json::from_slice(&out).expect("a response");
            if let Some(error) = response.get("error") {
                refused.push(format!("{name} {params} -> {error}"));
            }
        }
    }
    refused
}

#[tokio::test]
async fn verdicts_agree_with_what_the_new_server_takes() {
    let base = version!(Base, BaseCatalog);
    let shapes = version!(Shapes, ShapesCatalog);
    let paint = version!(Paint, PaintCatalog);
    let pairs = [
        (&base, version!(OptionalAtEnd, OptionalAtEndCatalog)),
        (&base, version!(RequiredAdded, RequiredAddedCatalog)),
        (&base, version!(OptionalInTheMiddle, OptionalInTheMiddleCatalog)),
        (&base, version!(Renamed, RenamedCatalog)),
        (&base, version!(Reordered, ReorderedCatalog)),
        (&base, version!(ByNameOnly, ByNameOnlyCatalog)),
        (&base, version!(Narrowed, NarrowedCatalog)),
        (&base, version!(Widened, WidenedCatalog)),
        (&base, version!(MadeOptional, MadeOptionalCatalog)),
        (&base, version!(MadeRequired, MadeRequiredCatalog)),
        (&base, version!(RemovedExtraAllowed, RemovedExtraAllowedCatalog)),
        (&base, version!(Removed, RemovedCatalog)),
        (&base, version!(WholeStruct, WholeStructCatalog)),
        (&base, version!(Alias, AliasCatalog)),
        (&shapes, version!(ShapesOptionalField, ShapesOptionalFieldCatalog)),
        (&shapes, version!(ShapesRequiredField, ShapesRequiredFieldCatalog)),
        (&shapes, version!(ShapesClosed, ShapesClosedCatalog)),
        (&paint, version!(PaintFewer, PaintFewerCatalog)),
        (&paint, version!(PaintMore, PaintMoreCatalog)),
    ];
    let mut disagreements = Vec::new();
    let mut breaking = 0;
    for (old, new) in &pairs {
        let report = compare(&old.document, &new.document).expect("valid documents");
        let refused = refused(old, new).await;
        breaking += usize::from(report.is_breaking());
        if std::env::var_os("SHOW_REPORTS").is_some() {
            println!("== {} -> {}: {} old calls refused\n{report}", old.name, new.name, refused.len());
        }
        if report.is_breaking() == refused.is_empty() {
            disagreements.push(format!(
                "{} -> {}: report says breaking = {}, the server refused {} old calls\n{report}{}",
                old.name,
                new.name,
                report.is_breaking(),
                refused.len(),
                refused.join("\n")
            ));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n\n"));
    // Both kinds of pair are present, so neither half is vacuous.
    assert!(breaking > 3 && breaking < pairs.len() - 3, "{breaking} of {} breaking", pairs.len());
}
