#![doc = include_str!("../../docs/catalog.md")]

// The records `#[rpc]` generates and the `Catalog` built from them are
// here; the rest is split by job: the OpenRPC document's types
// (`openrpc`), building a document from the records (`document`), the
// schemars generator and a method's params as one schema (`generate`),
// MCP tools (`tool`), and comparing two documents (`compat`).

use std::sync::Arc;

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator};

use crate::spec::MethodSpec;

pub mod compat;
mod document;
mod generate;
mod openrpc;
pub(crate) mod support;
mod tool;

pub use openrpc::{Components, ContentDescriptor, ErrorDescriptor, Info, MethodObject, OpenRpc, SubscriptionObject};
pub use tool::{CompletionTarget, McpKind, StandaloneSchema, ToolInfo};

/// The OpenRPC version the documents conform to.
pub const OPENRPC_VERSION: &str = "1.3.2";

/// The name of the discovery method every router serves unless turned off.
pub const DISCOVER_METHOD: &str = "rpc.discover";

/// Produces the schema of one type, registering named types in the generator.
pub type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

/// What `#[rpc]` records about one trait; generated as a `static`.
#[derive(Debug)]
#[non_exhaustive]
pub struct ServiceInfo {
    /// `info.title`: `#[rpc(title = "...")]`, or the trait's name.
    pub title: &'static str,
    /// `info.version`: `#[rpc(version = "...")]`, or the crate's version.
    pub version: &'static str,
    /// `info.description`: the trait's doc comment.
    pub description: Option<&'static str>,
    /// Every method, in declaration order.
    pub methods: &'static [MethodInfo],
}

/// What `#[rpc]` records about one method.
#[derive(Debug)]
#[non_exhaustive]
pub struct MethodInfo {
    /// The same spec the dispatch uses (wire names, optional params, accepted
    /// structure), so the catalog cannot drift from the decoder.
    pub spec: &'static MethodSpec,
    /// The first paragraph of the doc comment.
    pub summary: Option<&'static str>,
    /// The paragraphs after the first one.
    pub description: Option<&'static str>,
    /// One entry per entry of `spec.params`, in the same order.
    pub params: &'static [ParamInfo],
    /// The schema of the result; `None` for notifications (never answered).
    pub result: Option<SchemaFn>,
    /// `#[deprecated]` on the method.
    pub deprecated: bool,
    /// Errors declared with `#[rpc(error(code = ..., message = "..."))]`.
    pub errors: &'static [ErrorInfo],
    /// The errors the method's error type declares ([`RpcError::ERRORS`]),
    /// or none.
    pub error_type: fn() -> &'static [ErrorInfo],
    /// For an `#[rpc(alias = "...")]` name: the method's current name.
    pub alias_of: Option<&'static str>,
    /// How the method appears as an MCP tool (`#[rpc(mcp(...))]`).
    pub tool: ToolInfo,
    /// For a subscribe method (one with a `SubscriptionSink` parameter): its items and
    /// how they arrive and end. Its `result` is the subscription id.
    pub subscription: Option<SubscriptionInfo>,
}

/// What `#[rpc]` records about a subscribe method.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct SubscriptionInfo {
    /// The schema of one item (`T` of its `SubscriptionSink<T>`).
    pub item: SchemaFn,
    /// The method of the notifications that carry its items.
    pub notification: &'static str,
    /// The method that ends it.
    pub unsubscribe: &'static str,
}

/// What `#[rpc]` records about one parameter.
#[derive(Debug)]
#[non_exhaustive]
pub struct ParamInfo {
    /// The doc comment on the parameter.
    pub description: Option<&'static str>,
    /// The schema of the parameter's type.
    pub schema: SchemaFn,
}

/// An error a method declares it may answer with.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ErrorInfo {
    /// The JSON-RPC error code.
    pub code: i64,
    /// What the error means.
    pub message: &'static str,
}

impl ErrorInfo {
    /// Error `code`, which means `message`; for a hand-written
    /// [`RpcError`] (the derive writes them itself):
    ///
    /// ```
    /// use rpc_runtime::{RpcError, catalog::ErrorInfo};
    ///
    /// struct Busy;
    /// impl RpcError for Busy {
    ///     const ERRORS: &'static [ErrorInfo] = &[ErrorInfo::new(-32010, "The service is busy.")];
    /// }
    /// assert_eq!(Busy::ERRORS[0].code, -32010);
    /// ```
    pub const fn new(code: i64, message: &'static str) -> Self {
        ErrorInfo { code, message }
    }
}

/// Which JSON Schema dialect to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Draft {
    /// Draft-07, what OpenRPC 1.3 uses.
    Draft07,
    /// 2020-12, what MCP's `inputSchema` uses.
    Draft2020_12,
}

impl Draft {
    fn settings(self) -> SchemaSettings {
        match self {
            Draft::Draft07 => SchemaSettings::draft07(),
            Draft::Draft2020_12 => SchemaSettings::draft2020_12(),
        }
    }
}

/// The catalog of one or more traits: turn it into an OpenRPC document with
/// [`Catalog::document`].
///
/// `#[rpc]` generates, next to each trait `Foo`, a unit struct `FooCatalog`
/// whose `catalog()` returns the trait's [`Catalog`] without needing an
/// instance of the service (a build script or a CLI can write it to a file).
/// `into_rpc()` attaches the same catalog to the [`Router`](crate::Router),
/// [`Router::merge`](crate::Router::merge) merges catalogs, and every router
/// answers `rpc.discover` with the merged document unless turned off with
/// [`Router::set_discover`](crate::Router::set_discover).
///
/// Param and result types implement [`JsonSchema`]: derive it (with a
/// `schemars = "1"` dependency), or through the re-export, without one:
///
/// ```
/// use rpc_runtime::schemars::JsonSchema;
/// use rpc_runtime::serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// #[serde(crate = "rpc_runtime::serde")]
/// #[schemars(crate = "rpc_runtime::schemars")]
/// struct Point {
///     x: f64,
///     y: f64,
/// }
/// ```
///
/// A param or result type without `JsonSchema` appears as any value, with
/// a note (`"x-no-schema": true`); `#[rpc(strict_schemas)]` makes that a
/// compile error instead. A trait can also opt out entirely with
/// `#[rpc(catalog = false)]`: it then gets no `FooCatalog`, and its methods
/// are absent from `rpc.discover`.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    services: Vec<&'static ServiceInfo>,
    info: Option<Arc<Info>>,
}

impl Catalog {
    /// The catalog of one trait.
    pub fn new(service: &'static ServiceInfo) -> Self {
        Catalog { services: vec![service], info: None }
    }

    /// Adds the methods of `other`. The merged document's `info` is the one
    /// set with [`Catalog::set_info`], else the first trait's title and
    /// version with the titles of the others appended.
    pub fn merge(&mut self, other: Catalog) {
        if self.info.is_none() {
            self.info = other.info;
        }
        self.services.extend(other.services);
    }

    /// Replaces `info` (title, version, description) of the document.
    pub fn set_info(&mut self, info: Info) {
        self.info = Some(Arc::new(info));
    }

    /// `true` when no trait contributed a method.
    pub fn is_empty(&self) -> bool {
        self.methods().next().is_none()
    }

    /// Every method, in order of the traits and their declarations.
    pub fn methods(&self) -> impl Iterator<Item = &'static MethodInfo> + '_ {
        self.services.iter().flat_map(|service| service.methods.iter())
    }

    /// The method called `name` on the wire.
    pub fn method(&self, name: &str) -> Option<&'static MethodInfo> {
        self.methods().find(|method| method.spec.name == name)
    }

    /// The OpenRPC 1.3 document: schemas in JSON Schema draft-07, named
    /// types hoisted once into `components/schemas` (name clashes between
    /// different types get a numeric suffix, never an overwrite).
    ///
    /// Params are described as they deserialize and results as they
    /// serialize; a type used both ways has one entry when both schemas are
    /// the same, else the result's gets a name of its own.
    pub fn document(&self) -> OpenRpc {
        document::build(self.methods(), self.info())
    }

    /// The document with only the methods `keep` keeps (a caller's view:
    /// what its permissions let it call).
    pub(crate) fn document_where(&self, keep: impl Fn(&MethodInfo) -> bool) -> OpenRpc {
        document::build(self.methods().filter(|method| keep(method)), self.info())
    }

    /// The document as pretty-printed JSON.
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(&self.document()).unwrap_or_else(|err| unreachable!("documents serialize: {err}"))
    }

    /// The document's `info`: the one set with [`Catalog::set_info`], else
    /// the traits' titles, the first one's version, and their doc comments.
    pub fn info(&self) -> Info {
        if let Some(info) = &self.info {
            return (**info).clone();
        }
        let Some(first) = self.services.first() else {
            return Info { title: "JSON-RPC service".to_owned(), version: "0.0.0".to_owned(), description: None };
        };
        let titles: Vec<&str> = self.services.iter().map(|s| s.title).collect();
        let descriptions: Vec<&str> = self.services.iter().filter_map(|s| s.description).collect();
        Info {
            title: titles.join(" + "),
            version: first.version.to_owned(),
            description: (!descriptions.is_empty()).then(|| descriptions.join("\n\n")),
        }
    }
}

/// An error type that declares the errors it stands for, so that every
/// method returning `Result<_, E>` lists them in the catalog's `errors`.
/// Implemented by `#[derive(RpcError)]`, which also gives
/// `From<E> for ErrorObject` and [`FromErrorObject`](crate::peer::FromErrorObject).
pub trait RpcError {
    /// Each error: its code and message.
    const ERRORS: &'static [ErrorInfo];
}

impl RpcError for crate::wire::ErrorObject {
    const ERRORS: &'static [ErrorInfo] = &[];
}

/// An error object: `code`, `message` and any `data`.
impl JsonSchema for crate::wire::ErrorObject {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ErrorObject".into()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        "rpc_runtime::ErrorObject".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        schemars::json_schema!({
            "description": "A JSON-RPC 2.0 error object.",
            "type": "object",
            "properties": {
                "code": {"type": "integer", "minimum": i64::MIN, "maximum": i64::MAX},
                "message": {"type": "string"},
                "data": {}
            },
            "required": ["code", "message"]
        })
    }
}
