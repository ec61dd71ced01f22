//! Rules that need the whole model. Each function rejects one kind of
//! mistake; its comment shows the user code it rejects.

use std::collections::HashMap;

use proc_macro2::Span;
use syn::spanned::Spanned;

use crate::ast::{Method, Output, Service};
use crate::attr::McpKind;
use crate::ctxt::Ctxt;

mod mcp;

use mcp::{
    completion_params, completion_target, duplicate_completions, duplicate_mcp_names, duplicate_resources,
    invalid_prompt_or_resource_name, invalid_tool_name, mcp_kind_is_no_subscription, resource_list_takes_no_params,
    resource_params,
};

/// Method names the generated code adds to the trait.
pub const RESERVED_METHODS: &[&str] = &["into_rpc"];

pub fn check(cx: &Ctxt, service: &Service) {
    duplicate_method_names(cx, service);
    duplicate_mcp_names(cx, service, "tool", |kind| matches!(kind, McpKind::Tool));
    duplicate_mcp_names(cx, service, "prompt", |kind| matches!(kind, McpKind::Prompt(_)));
    duplicate_resources(cx, service);
    duplicate_completions(cx, service);
    let namespace_reserved = reserved_namespace(cx, service);
    for method in &service.methods {
        if !namespace_reserved {
            reserved_prefix(cx, method);
        }
        invalid_names(cx, method);
        reserved_ident(cx, method);
        notification_returns_unit(cx, method);
        error_type_is_not_text(cx, method);
        whole_params_has_one_param(cx, method);
        duplicate_param_names(cx, method);
        invalid_permission(cx, method);
        invalid_tool_name(cx, method);
        invalid_prompt_or_resource_name(cx, method);
        mcp_kind_is_no_subscription(cx, method);
        resource_params(cx, method);
        resource_list_takes_no_params(cx, method);
        completion_params(cx, method);
        completion_target(cx, service, method);
        unsubscribe_needs_sink(cx, method);
        one_sink(cx, method);
        subscription_is_async(cx, method);
        subscription_returns_nothing(cx, method);
        subscription_is_no_notification(cx, method);
        blocking_is_for_plain_fns(cx, method);
        exclusive_is_no_subscription(cx, method);
    }
}

/// The names a method adds to the wire: its own, its aliases', and its
/// unsubscribe method's, each with where to point errors and what it is.
/// A default unsubscribe name is left out: it is made of the method's
/// own, so that a mistake in that one is reported once, on it.
fn wire_names(method: &Method) -> impl Iterator<Item = (&String, Span, &'static str)> {
    let unsubscribe = method.unsubscribe.iter().filter(|_| !method.unsubscribe_default);
    std::iter::once((&method.wire_name, method.name_span, "method"))
        .chain(method.aliases.iter().map(|(name, span)| (name, *span, "alias")))
        .chain(unsubscribe.map(|(name, span)| (name, *span, "unsubscribe method")))
}

/// ```ignore
/// #[rpc(requires = "")]
/// fn drop_all(&self);        // a permission nobody could be granted by name
/// #[rpc(requires = "ad min")]
/// fn reset(&self);           // whitespace in a permission name
/// #[rpc(requires(any("admin", "admin")))]
/// fn stop(&self);            // the same permission twice
/// ```
fn invalid_permission(cx: &Ctxt, method: &Method) {
    let Some(requires) = &method.requires else {
        return;
    };
    let mut seen: Vec<String> = Vec::new();
    for name in requires.permissions() {
        let permission = name.value();
        let problem = if permission.is_empty() {
            "must not be empty"
        } else if permission.chars().any(|c| c.is_whitespace() || c.is_control()) {
            "must not contain whitespace or control characters"
        } else if seen.contains(&permission) {
            "is listed twice"
        } else {
            seen.push(permission);
            continue;
        };
        cx.syn_error(syn::Error::new(
            name.span(),
            format!(
                "the permission name {permission:?} {problem}: it is matched exactly against the `Permissions` the connection hook grants; write a name such as `requires = \"admin\"`"
            ),
        ));
    }
}

/// ```ignore
/// fn add(&self);
/// #[rpc(name = "add")]
/// fn plus(&self);   // two methods called `add` on the wire
/// ```
///
/// ```ignore
/// fn add(&self);
/// #[rpc(alias = "add")]
/// fn plus(&self);   // an alias is a name like any other
/// ```
///
/// ```ignore
/// fn stop(&self);
/// #[rpc(unsubscribe = "stop")]
/// async fn ticks(&self, sink: SubscriptionSink<u64>);   // `stop` is a method already
/// ```
///
/// ```ignore
/// fn unsubscribe_ticks(&self);
/// async fn ticks(&self, sink: SubscriptionSink<u64>);   // ended by `unsubscribe_ticks` by default
/// ```
///
/// Several subscription methods may share one unsubscribe method.
fn duplicate_method_names(cx: &Ctxt, service: &Service) {
    // Each name with the first method that uses it, and whether as an alias.
    let mut seen: HashMap<&str, (&Method, bool)> = HashMap::new();
    for method in &service.methods {
        let names = std::iter::once((&method.wire_name, method.name_span, false))
            .chain(method.aliases.iter().map(|(n, s)| (n, *s, true)));
        // An empty name is an error of its own (`invalid_names`).
        for (name, span, alias) in names.filter(|(name, _, _)| !name.is_empty()) {
            if let Some((first, _)) = seen.insert(name, (method, alias)) {
                cx.syn_error(syn::Error::new(
                    span,
                    format!(
                        "duplicate method name `{name}`: method `{}` already uses it; give one of them another `#[rpc(name = \"...\")]`",
                        first.ident
                    ),
                ));
            }
        }
    }
    let prefix = match &service.attrs.namespace {
        Some(namespace) => format!("{}{}", namespace.value(), service.attrs.separator),
        None => String::new(),
    };
    for (name, methods) in service.unsubscribe_methods() {
        let Some(&(first, alias)) = seen.get(name).filter(|_| !name.is_empty()) else {
            continue;
        };
        let user = match alias {
            true => format!("an alias of method `{}`", first.ident),
            false => format!("the name of method `{}`", first.ident),
        };
        // A name written is reported once, where it is first written; a
        // default name on each subscription method it is the default of.
        let written = methods.iter().find(|method| !method.unsubscribe_default);
        for method in methods.iter().filter(|method| method.unsubscribe_default).chain(written) {
            let Some((_, span)) = &method.unsubscribe else { continue };
            let message = if method.unsubscribe_default {
                // What the user writes: the name without the namespace.
                let base = name.strip_prefix(&prefix).unwrap_or(name);
                let base = base.strip_prefix("unsubscribe_").unwrap_or(base);
                format!(
                    "`{}` is a subscription method without `#[rpc(unsubscribe = \"...\")]`, so its unsubscribe method is named `{name}` by default, but `{name}` is {user} already; name its unsubscribe method yourself, such as `#[rpc(unsubscribe = \"stop_{base}\")]`",
                    method.ident
                )
            } else {
                format!(
                    "the unsubscribe method `{name}` has {user}; choose another name, such as `unsubscribe_{}`",
                    method.wire_name
                )
            };
            cx.syn_error(syn::Error::new(*span, message));
        }
    }
}

/// ```ignore
/// #[rpc(namespace = "rpc", namespace_separator = ".")]   // every method is `rpc.*`
/// ```
///
/// Reported once, on the namespace; returns whether it was.
fn reserved_namespace(cx: &Ctxt, service: &Service) -> bool {
    let Some(namespace) = &service.attrs.namespace else {
        return false;
    };
    let prefix = format!("{}{}", namespace.value(), service.attrs.separator);
    if !prefix.starts_with("rpc.") {
        return false;
    }
    cx.syn_error(syn::Error::new(
        namespace.span(),
        format!(
            "namespace `{}` with separator `{}` makes every method name start with `rpc.`, which JSON-RPC 2.0 reserves for rpc-internal methods; choose another namespace or separator",
            namespace.value(),
            service.attrs.separator
        ),
    ));
    true
}

/// ```ignore
/// #[rpc(name = "rpc.discover")]
/// fn discover(&self);   // `rpc.` names are reserved by JSON-RPC 2.0
/// ```
fn reserved_prefix(cx: &Ctxt, method: &Method) {
    for (name, span, _) in wire_names(method).filter(|(name, _, _)| name.starts_with("rpc.")) {
        cx.syn_error(syn::Error::new(
            span,
            format!(
                "method name `{name}` starts with `rpc.`, which JSON-RPC 2.0 reserves for rpc-internal methods; choose another name"
            ),
        ));
    }
}

/// ```ignore
/// #[rpc(name = "")]
/// fn nameless(&self);              // no name to call it by
/// #[rpc(alias = " old")]
/// fn padded(&self);                // a caller would have to send the spaces
/// fn f(&self, #[rpc(name = "")] a: u8);
/// ```
fn invalid_names(cx: &Ctxt, method: &Method) {
    let names =
        wire_names(method).chain(method.wire_params().map(|param| (&param.wire_name, param.name_span, "parameter")));
    for (name, span, what) in names {
        let problem = if name.is_empty() {
            "must not be empty"
        } else if name.trim() != name {
            "must not start or end with whitespace"
        } else if name.chars().any(char::is_control) {
            "must not contain control characters"
        } else {
            continue;
        };
        let example = if what == "parameter" { "blockHash" } else { "getBlock" };
        cx.syn_error(syn::Error::new(
            span,
            format!("the {what} name {name:?} {problem}: it is what callers send on the wire; write a name such as `{example}`"),
        ));
    }
}

/// ```ignore
/// fn into_rpc(&self);   // clashes with the generated `into_rpc`
/// ```
fn reserved_ident(cx: &Ctxt, method: &Method) {
    if RESERVED_METHODS.iter().any(|r| method.ident == r) {
        cx.error_spanned_by(
            &method.ident,
            format!(
                "`{}` is generated by #[rpc]; rename the Rust method and keep the wire name with `#[rpc(name = \"{}\")]`",
                method.ident, method.wire_name
            ),
        );
    }
}

/// ```ignore
/// #[rpc(notification)]
/// fn changed(&self) -> u32;   // nobody receives the value
/// ```
fn notification_returns_unit(cx: &Ctxt, method: &Method) {
    if method.notification.is_some() && !matches!(method.output, Output::Unit) {
        cx.error_spanned_by(
            &method.sig.output,
            "a notification is never answered, so it cannot return a value; remove the return type or drop `notification`",
        );
    }
}

/// ```ignore
/// fn get(&self) -> Result<u8, String>;   // which code would a string have?
/// ```
fn error_type_is_not_text(cx: &Ctxt, method: &Method) {
    let Output::Result(ty) = &method.output else {
        return;
    };
    let Some((_, err)) = crate::render::result_args(ty) else {
        return;
    };
    let text = match err {
        syn::Type::Reference(reference) => matches!(&*reference.elem, syn::Type::Path(p) if p.path.is_ident("str")),
        syn::Type::Path(path) => {
            path.path.segments.last().is_some_and(|s| s.ident == "String" && s.arguments.is_empty())
        }
        _ => false,
    };
    if text {
        cx.error_spanned_by(
            err,
            format!(
                "`{}` cannot be the error type of an #[rpc] method: a JSON-RPC error needs a code as well as a message; return `Result<T, ErrorObject>` (`ErrorObject::new(-32001, message)`) or an error enum with `#[derive(RpcError)]`",
                crate::render::type_name(err)
            ),
        );
    }
}

/// ```ignore
/// #[rpc(whole_params)]
/// fn sum(&self, a: i64, b: i64) -> i64;   // which one gets the params?
/// ```
fn whole_params_has_one_param(cx: &Ctxt, method: &Method) {
    if method.whole_params && method.wire_params().count() != 1 {
        cx.error_spanned_by(
            &method.sig.inputs,
            "`whole_params` needs exactly one parameter (besides `&self` and a `Context`), which receives the entire params value",
        );
    }
}

/// ```ignore
/// fn f(&self, a: u8, #[rpc(name = "a")] b: u8);
/// ```
fn duplicate_param_names(cx: &Ctxt, method: &Method) {
    let mut seen = HashMap::new();
    for param in method.wire_params() {
        if let Some(first) = seen.insert(&param.wire_name, &param.ident) {
            cx.error_spanned_by(
                &param.ident,
                format!(
                    "duplicate parameter name `{}` (parameter `{first}` already uses it); rename one with `#[rpc(name = \"...\")]`",
                    param.wire_name
                ),
            );
        }
    }
}

/// Whether a parameter's type is named `SubscriptionSink` or
/// `PendingSubscription` (well-formed or not).
fn takes_sink(method: &Method) -> bool {
    method.params.iter().any(|param| param.sink.is_some())
        || method.sig.inputs.iter().any(|input| match input {
            syn::FnArg::Typed(typed) => {
                let name = crate::render::type_name(&typed.ty);
                name.contains("SubscriptionSink") || name.contains("PendingSubscription")
            }
            syn::FnArg::Receiver(_) => false,
        })
}

/// ```ignore
/// #[rpc(unsubscribe = "unsubscribe_ticks")]
/// async fn ticks(&self, count: u64);   // nothing to unsubscribe from
/// ```
fn unsubscribe_needs_sink(cx: &Ctxt, method: &Method) {
    if let (Some((_, span)), false) = (&method.unsubscribe, takes_sink(method)) {
        cx.syn_error(syn::Error::new(
            *span,
            "`unsubscribe` is for subscription methods, which send items through a parameter `sink: SubscriptionSink<Item>`; add one, or remove `unsubscribe`",
        ));
    }
}

/// ```ignore
/// async fn ticks(&self, a: SubscriptionSink<u64>, b: SubscriptionSink<u64>);   // one subscription per call
/// async fn feed(&self, a: PendingSubscription<u64>, b: SubscriptionSink<u64>);   // answered how?
/// ```
fn one_sink(cx: &Ctxt, method: &Method) {
    let mut sinks = method.params.iter().filter(|param| param.sink.is_some());
    let Some(first) = sinks.next() else { return };
    for extra in sinks {
        let message = match (first.pending, extra.pending) {
            (false, false) => {
                "a subscription method takes one `SubscriptionSink`: each call opens one subscription with one stream of items"
            }
            (true, true) => {
                "a subscription method takes one `PendingSubscription`: each call opens one subscription with one stream of items"
            }
            _ => {
                "a subscription method takes a `SubscriptionSink` (answered with the id before the method's first `.await`) or a `PendingSubscription` (answered when the method accepts), not both"
            }
        };
        cx.error_spanned_by(&extra.ty, message);
    }
}

/// ```ignore
/// #[rpc(unsubscribe = "unsubscribe_ticks")]
/// fn ticks(&self, sink: SubscriptionSink<u64>);   // the subscription lasts while the method runs
/// ```
fn subscription_is_async(cx: &Ctxt, method: &Method) {
    if method.item().is_some() && !method.is_async {
        cx.error_spanned_by(
            method.sig.fn_token,
            format!(
                "a subscription method is an `async fn`: the subscription lasts while it runs and ends when it returns; write `async fn {}`",
                method.ident
            ),
        );
    }
}

/// ```ignore
/// #[rpc(unsubscribe = "unsubscribe_ticks")]
/// async fn ticks(&self, sink: SubscriptionSink<u64>) -> u64;   // the answer is the subscription id
/// ```
fn subscription_returns_nothing(cx: &Ctxt, method: &Method) {
    if method.item().is_none() {
        return;
    }
    let wrong = match &method.output {
        Output::Unit => None,
        Output::Plain(ty) => Some(ty.span()),
        Output::Result(ty) => match crate::render::result_args(ty) {
            Some((syn::Type::Tuple(unit), _)) if unit.elems.is_empty() => None,
            Some((ok, _)) => Some(ok.span()),
            // An alias: checked by the compiler (`IntoSubscriptionEnd`).
            None => None,
        },
    };
    if let Some(span) = wrong {
        cx.syn_error(syn::Error::new(
            span,
            "a subscription method returns `()` or `Result<(), E>`: the subscribe call is answered with the subscription id, and items go through the `SubscriptionSink`",
        ));
    }
}

/// ```ignore
/// #[rpc(notification, unsubscribe = "unsubscribe_ticks")]
/// async fn ticks(&self, sink: SubscriptionSink<u64>);   // nobody would learn the id
/// ```
fn subscription_is_no_notification(cx: &Ctxt, method: &Method) {
    if let (Some(span), true) = (method.notification, takes_sink(method)) {
        cx.syn_error(syn::Error::new(
            span,
            "a subscription method cannot be a notification: its answer is the subscription id, which the client needs to read its items and unsubscribe",
        ));
    }
}

/// ```ignore
/// #[rpc(blocking)]
/// async fn index(&self) -> u64;   // already a task, which must not block
/// #[rpc(blocking, unsubscribe = "unsubscribe_ticks")]
/// async fn ticks(&self, sink: SubscriptionSink<u64>);   // likewise
/// ```
fn blocking_is_for_plain_fns(cx: &Ctxt, method: &Method) {
    let Some(span) = method.blocking else { return };
    let message = if takes_sink(method) {
        "`blocking` has no effect on a subscription method: it is an `async fn` that runs as a task of its own; do its blocking work with `tokio::task::spawn_blocking` inside it"
    } else if method.is_async {
        "`blocking` is for a plain `fn`: an `async fn` already runs as a task of its own, which blocking work would stall; make the method a plain `fn` with `#[rpc(blocking)]`, or keep it `async` and await `tokio::task::spawn_blocking` inside it"
    } else {
        return;
    };
    cx.syn_error(syn::Error::new(span, message));
}

/// ```ignore
/// #[rpc(exclusive, unsubscribe = "unsubscribe_ticks")]
/// async fn ticks(&self, sink: SubscriptionSink<u64>);   // runs as long as the subscription
/// ```
fn exclusive_is_no_subscription(cx: &Ctxt, method: &Method) {
    let Some(span) = method.exclusive else { return };
    if takes_sink(method) {
        cx.syn_error(syn::Error::new(
            span,
            "`exclusive` cannot be put on a subscription method: its call lasts as long as the subscription, and every later call on the connection would wait for it to end; make the method that changes the state `exclusive` instead",
        ));
    }
}
