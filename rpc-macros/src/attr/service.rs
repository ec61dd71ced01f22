//! The trait's attribute, `#[rpc(namespace = "eth", ...)]`: how its
//! methods are named on the wire and what the expansion generates.

use syn::meta::ParseNestedMeta;
use syn::LitStr;

use super::{
    flag, given_once, string_value, unknown_key, CATALOG, CRATE, NAMESPACE, NAMESPACE_SEPARATOR, RENAME_ALL,
    SERVER_ONLY, STRICT_SCHEMAS, SUBSCRIPTION_NOTIFICATION, TITLE, TRAIT_KEYS, VERSION,
};
use crate::case::{RenameRule, RULE_NAMES};
use crate::ctxt::Ctxt;

/// Options on the trait: `#[rpc(namespace = "eth", rename_all = "camelCase")]`.
pub struct ServiceAttrs {
    pub namespace: Option<LitStr>,
    pub separator: String,
    pub rename_all: Option<RenameRule>,
    pub crate_path: syn::Path,
    /// `info.title` of the catalog; the trait name when absent.
    pub title: Option<LitStr>,
    /// `info.version` of the catalog; the crate version when absent.
    pub version: Option<LitStr>,
    /// `catalog = false` turns the catalog off.
    pub catalog: bool,
    /// `strict_schemas`: every param and result type must implement
    /// `JsonSchema` (a compile error otherwise) instead of appearing in the
    /// catalog as any value.
    pub strict_schemas: bool,
    /// `subscription_notification = "eth_subscription"`: the method of the
    /// notifications that carry subscription items (default `subscription`,
    /// after the namespace).
    pub subscription_notification: Option<LitStr>,
    /// `server_only`: no client, so params need not be `Serialize` nor
    /// results `DeserializeOwned`.
    pub server_only: bool,
}

impl Default for ServiceAttrs {
    fn default() -> Self {
        ServiceAttrs {
            namespace: None,
            separator: "_".to_owned(),
            rename_all: None,
            crate_path: syn::parse_quote!(::rpc_runtime),
            title: None,
            version: None,
            catalog: true,
            strict_schemas: false,
            subscription_notification: None,
            server_only: false,
        }
    }
}

/// Parses the arguments of the outer `#[rpc(...)]`.
pub fn parse_service_attrs(cx: &Ctxt, args: proc_macro2::TokenStream) -> ServiceAttrs {
    let mut attrs = ServiceAttrs::default();
    let mut seen = Vec::new();
    let parser = syn::meta::parser(|meta| {
        given_once(&meta, &mut seen)?;
        if meta.path.is_ident(NAMESPACE) {
            let value = string_value(&meta, NAMESPACE, "\"eth\"")?;
            if value.value().is_empty() {
                return Err(syn::Error::new(
                    value.span(),
                    "namespace must not be empty: give a prefix such as `namespace = \"eth\"`, or remove the key",
                ));
            }
            attrs.namespace = Some(value);
        } else if meta.path.is_ident(NAMESPACE_SEPARATOR) {
            attrs.separator = string_value(&meta, NAMESPACE_SEPARATOR, "\".\"")?.value();
        } else if meta.path.is_ident(RENAME_ALL) {
            attrs.rename_all = Some(parse_rename_rule(&meta)?);
        } else if meta.path.is_ident(CRATE) {
            let value = string_value(&meta, CRATE, "\"::rpc_runtime\"")?;
            attrs.crate_path = value.parse().map_err(|_| {
                syn::Error::new(
                    value.span(),
                    "`crate` must be the path of the runtime crate or a re-export of it, such as `crate = \"::rpc_runtime\"` or `crate = \"my_facade::rpc\"`",
                )
            })?;
        } else if meta.path.is_ident(TITLE) {
            attrs.title = Some(string_value(&meta, TITLE, "\"Calculator API\"")?);
        } else if meta.path.is_ident(VERSION) {
            attrs.version = Some(string_value(&meta, VERSION, "\"1.2.0\"")?);
        } else if meta.path.is_ident(CATALOG) {
            attrs.catalog = meta.value()?.parse::<syn::LitBool>()?.value;
        } else if meta.path.is_ident(STRICT_SCHEMAS) {
            flag(&meta, STRICT_SCHEMAS)?;
            attrs.strict_schemas = true;
        } else if meta.path.is_ident(SUBSCRIPTION_NOTIFICATION) {
            let value = string_value(&meta, SUBSCRIPTION_NOTIFICATION, "\"eth_subscription\"")?;
            let text = value.value();
            if text.is_empty() || text.trim() != text || text.chars().any(char::is_control) {
                return Err(syn::Error::new(
                    value.span(),
                    "`subscription_notification` is the method name of subscription items on the wire: write a name such as `subscription_notification = \"eth_subscription\"`",
                ));
            }
            attrs.subscription_notification = Some(value);
        } else if meta.path.is_ident(SERVER_ONLY) {
            flag(&meta, SERVER_ONLY)?;
            attrs.server_only = true;
        } else {
            return Err(unknown_key(&meta, "on an #[rpc] trait", TRAIT_KEYS));
        }
        Ok(())
    });
    if let Err(err) = syn::parse::Parser::parse2(parser, args) {
        cx.syn_error(err);
    }
    attrs
}

fn parse_rename_rule(meta: &ParseNestedMeta<'_>) -> syn::Result<RenameRule> {
    let value = string_value(meta, RENAME_ALL, "\"camelCase\"")?;
    RenameRule::from_str(&value.value()).ok_or_else(|| {
        syn::Error::new(
            value.span(),
            format!("unknown rename_all rule `{}`; expected one of: {}", value.value(), RULE_NAMES.join(", ")),
        )
    })
}
