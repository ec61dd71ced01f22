//! The OpenRPC document's types, as [`Catalog::document`](super::Catalog::document)
//! returns them and `rpc.discover` serializes them: only the parts of
//! OpenRPC 1.3 this crate writes, and its `x-` extensions.

use serde::Serialize;
use serde_json::{Map, Value};

/// An OpenRPC document (the parts this crate generates).
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct OpenRpc {
    /// Always [`OPENRPC_VERSION`](super::OPENRPC_VERSION).
    pub openrpc: &'static str,
    /// Title, version and description of the service.
    pub info: Info,
    /// Every method.
    pub methods: Vec<MethodObject>,
    /// The named schemas referred to with `#/components/schemas/Name`.
    pub components: Components,
}

/// The `info` object.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Info {
    /// The service's title.
    pub title: String,
    /// The service's version.
    pub version: String,
    /// What the service is for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl Info {
    /// A service's `title` and `version`, without a description; for
    /// [`Catalog::set_info`](super::Catalog::set_info):
    ///
    /// ```
    /// let info = rpc_runtime::catalog::Info::new("Everything", "9.9.9").description("All services in one.");
    /// assert_eq!(info.description.as_deref(), Some("All services in one."));
    /// ```
    pub fn new(title: impl Into<String>, version: impl Into<String>) -> Self {
        Info { title: title.into(), version: version.into(), description: None }
    }

    /// The same info with `description`.
    pub fn description(self, description: impl Into<String>) -> Self {
        Info { description: Some(description.into()), ..self }
    }
}

/// A method object.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MethodObject {
    /// The wire name.
    pub name: String,
    /// The first paragraph of the doc comment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The rest of the doc comment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The params in order.
    pub params: Vec<ContentDescriptor>,
    /// The result; absent for notifications.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<ContentDescriptor>,
    /// `either`, `by-name` or `by-position`.
    pub param_structure: &'static str,
    /// `#[deprecated]`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub deprecated: bool,
    /// Declared errors.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ErrorDescriptor>,
    /// Extension `x-whole-params`: the one content descriptor in `params`
    /// describes the entire JSON-RPC `params` value (a variadic array or a
    /// params struct), not one entry of it. `paramStructure` says whether
    /// that value is an object or an array, and the server holds to it.
    /// A `whole_params` struct is not one: its fields are listed as the
    /// named params they are.
    #[serde(rename = "x-whole-params", skip_serializing_if = "std::ops::Not::not")]
    pub whole_params: bool,
    /// Extension `x-params-note`: why `params` cannot say what the method
    /// takes (a `whole_params` list: OpenRPC 1.3 has no variadic params).
    #[serde(rename = "x-params-note", skip_serializing_if = "Option::is_none")]
    pub params_note: Option<&'static str>,
    /// Extension `x-allow-extra-params`: surplus positional params and
    /// unknown named params are ignored instead of rejected.
    #[serde(rename = "x-allow-extra-params", skip_serializing_if = "std::ops::Not::not")]
    pub allow_extra_params: bool,
    /// Extension `x-alias-of`: this name is an older name of that method
    /// (`#[rpc(alias = "...")]`), served the same way and `deprecated`.
    #[serde(rename = "x-alias-of", skip_serializing_if = "Option::is_none")]
    pub alias_of: Option<&'static str>,
    /// Extension `x-requires`: the permission a caller must hold
    /// (`#[rpc(requires = "...")]`: `"admin"`), or `{"anyOf": [...]}` /
    /// `{"allOf": [...]}` of them; others are refused with -32003.
    #[serde(rename = "x-requires", skip_serializing_if = "Option::is_none")]
    pub requires: Option<crate::spec::Requirement>,
    /// Extension `x-subscription`: this method opens a subscription (its
    /// `result` is the subscription id) whose items arrive as
    /// notifications.
    #[serde(rename = "x-subscription", skip_serializing_if = "Option::is_none")]
    pub subscription: Option<SubscriptionObject>,
}

/// The `x-subscription` extension of a subscribe method: items arrive as
/// notifications `notification` with params `{"subscription": id,
/// "result": item}` until the method `unsubscribe` (params `[id]`) ends
/// them, or the server does (a last notification without `result`:
/// `"end": true`, or `"error"`).
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct SubscriptionObject {
    /// The method of the item notifications.
    pub notification: &'static str,
    /// JSON Schema (draft-07) of one item.
    pub item: Value,
    /// The method that ends the subscription.
    pub unsubscribe: &'static str,
}

/// A content descriptor: one param or the result.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ContentDescriptor {
    /// The wire name.
    pub name: String,
    /// The doc comment on the parameter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `false` exactly for `Option` params.
    pub required: bool,
    /// JSON Schema (draft-07) of the value.
    pub schema: Value,
}

/// An error object of a method's `errors`.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ErrorDescriptor {
    /// The JSON-RPC error code.
    pub code: i64,
    /// What the error means.
    pub message: String,
}

/// The `components` object.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Components {
    /// Named schemas, each once.
    pub schemas: Map<String, Value>,
}
