//! Rules that need the whole model. Each function rejects one kind of
//! mistake; its comment shows the user code it rejects.

use std::collections::HashMap;

use proc_macro2::Span;
use syn::spanned::Spanned;

use crate::ast::{Method, Output, Param, Service};
use crate::attr::{CompletionTarget, McpKind};
use crate::ctxt::Ctxt;

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
        sink_needs_unsubscribe(cx, method);
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
fn wire_names(method: &Method) -> impl Iterator<Item = (&String, Span, &'static str)> {
    std::iter::once((&method.wire_name, method.name_span, "method"))
        .chain(method.aliases.iter().map(|(name, span)| (name, *span, "alias")))
        .chain(method.unsubscribe.iter().map(|(name, span)| (name, *span, "unsubscribe method")))
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
/// Several subscription methods may share one unsubscribe method.
fn duplicate_method_names(cx: &Ctxt, service: &Service) {
    let mut seen: HashMap<&str, &Method> = HashMap::new();
    for method in &service.methods {
        let names =
            std::iter::once((&method.wire_name, method.name_span)).chain(method.aliases.iter().map(|(n, s)| (n, *s)));
        // An empty name is an error of its own (`invalid_names`).
        for (name, span) in names.filter(|(name, _)| !name.is_empty()) {
            if let Some(first) = seen.insert(name, method) {
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
    for (name, methods) in service.unsubscribe_methods() {
        let (Some(first), Some(method)) = (seen.get(name).filter(|_| !name.is_empty()), methods.first()) else {
            continue;
        };
        let span = method.unsubscribe.as_ref().map_or(method.name_span, |(_, span)| *span);
        cx.syn_error(syn::Error::new(
            span,
            format!(
                "the unsubscribe method `{name}` has the name of method `{}`; choose another name, such as `unsubscribe_{}`",
                first.ident, method.wire_name
            ),
        ));
    }
}

/// The longest tool name model APIs take.
const TOOL_NAME_MAX: usize = 64;

/// ```ignore
/// #[rpc(mcp(name = "items.list"))]
/// fn list(&self) -> Vec<u8>;   // model APIs take only [a-zA-Z0-9_-]{1,64}
/// #[rpc(mcp(name = "list"))]
/// async fn ticks(&self, sink: SubscriptionSink<u64>);   // a subscription is no tool
/// ```
fn invalid_tool_name(cx: &Ctxt, method: &Method) {
    let (Some(name), McpKind::Tool) = (&method.mcp.name, &method.mcp.kind) else {
        // Other kinds: `invalid_prompt_or_resource_name`.
        return;
    };
    if method.item().is_some() {
        cx.syn_error(syn::Error::new(
            name.span(),
            "`mcp(name = ...)` has no effect on a subscription method: subscriptions are not MCP tools (a tool call has one result); remove it",
        ));
        return;
    }
    let value = name.value();
    let problem = if value.is_empty() {
        "is empty".to_owned()
    } else if value.len() > TOOL_NAME_MAX {
        format!("is {} bytes long, more than {TOOL_NAME_MAX}", value.len())
    } else if let Some(bad) = value.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-')) {
        format!("has {bad:?}")
    } else {
        return;
    };
    cx.syn_error(syn::Error::new(
        name.span(),
        format!(
            "the tool name {value:?} {problem}: model APIs take tool names of 1 to {TOOL_NAME_MAX} characters from `a-z`, `A-Z`, `0-9`, `_` and `-`; write a name such as `list_items`"
        ),
    ));
}

/// ```ignore
/// #[rpc(mcp(prompt, name = ""))]
/// fn review(&self, code: String) -> String;   // a prompt is asked for by name
/// #[rpc(mcp(resource = "notes://index", name = " index"))]
/// fn index(&self) -> String;                   // a name with spaces around it
/// ```
///
/// Prompt and resource names are not tool names: any other text will do.
fn invalid_prompt_or_resource_name(cx: &Ctxt, method: &Method) {
    let (Some(name), Some(kind)) = (&method.mcp.name, kind_to_check(method)) else { return };
    let (what, used, example) = match kind {
        McpKind::Prompt(_) => ("prompt", "clients ask for the prompt by this name", "review_code"),
        McpKind::Resource { .. } => ("resource", "clients list the resource under this name", "notes"),
        // A tool's: `invalid_tool_name`; `name` on the others is rejected
        // with the attribute.
        _ => return,
    };
    let value = name.value();
    let problem = if value.trim().is_empty() {
        "is empty"
    } else if value.trim() != value {
        "starts or ends with whitespace"
    } else if value.chars().any(char::is_control) {
        "has control characters"
    } else {
        return;
    };
    cx.syn_error(syn::Error::new(
        name.span(),
        format!("the {what} name {value:?} {problem}: {used}; write a name such as `{example}`, or remove `name` to use the method's name"),
    ));
}

/// The name a tool or prompt is offered under: its `mcp(name)`, else its
/// wire name (namespace included: the runtime's `spec.name`), with where
/// to point errors about it.
fn mcp_name(method: &Method) -> (String, Span) {
    match &method.mcp.name {
        Some(name) => (name.value(), name.span()),
        None => (method.wire_name.clone(), method.name_span),
    }
}

/// Whether `method` is offered over MCP at all, as what its `mcp(...)`
/// says (a notification or a subscription is an error of its own).
fn offered(method: &Method) -> bool {
    method.notification.is_none() && !method.mcp.hidden && method.item().is_none()
}

/// ```ignore
/// #[rpc(mcp(name = "add"))]
/// fn plus(&self, a: i64, b: i64) -> i64;
/// fn add(&self, a: i64, b: i64) -> i64;   // two tools called `add`
/// #[rpc(mcp(prompt, name = "review"))]
/// fn review_code(&self, code: String) -> String;
/// #[rpc(mcp(prompt))]
/// fn review(&self, text: String) -> String;   // two prompts called `review`
/// ```
///
/// Names are per kind (`what`, which `is_kind` tells): a tool and a
/// prompt may share one.
fn duplicate_mcp_names(cx: &Ctxt, service: &Service, what: &str, is_kind: fn(&McpKind) -> bool) {
    let mut seen: HashMap<String, &Method> = HashMap::new();
    for method in service.methods.iter().filter(|method| offered(method) && is_kind(&method.mcp.kind)) {
        let (name, span) = mcp_name(method);
        if name.is_empty() {
            continue;
        }
        if let Some(first) = seen.get(&name) {
            if method.mcp.name.is_none() && first.mcp.name.is_none() {
                // Two methods of one wire name: `duplicate_method_names`.
                continue;
            }
            cx.syn_error(syn::Error::new(
                span,
                format!(
                    "duplicate MCP {what} name `{name}`: method `{}` is that {what} already; give one of them another `#[rpc(mcp(name = \"...\"))]`",
                    first.ident
                ),
            ));
            continue;
        }
        seen.insert(name, method);
    }
}

/// ```ignore
/// #[rpc(mcp(resource = "notes://{id}"))]
/// fn note(&self, id: u64) -> String;
/// #[rpc(mcp(resource = "notes://{id}"))]
/// fn note_text(&self, id: u64) -> String;   // which one reads `notes://7`?
/// ```
fn duplicate_resources(cx: &Ctxt, service: &Service) {
    let mut seen: HashMap<String, &Method> = HashMap::new();
    for method in service.methods.iter().filter(|method| offered(method)) {
        let McpKind::Resource { uri, .. } = &method.mcp.kind else { continue };
        if let Some(first) = seen.get(&uri.value()) {
            cx.syn_error(syn::Error::new(
                uri.span(),
                format!(
                    "duplicate MCP resource {:?}: method `{}` reads it already; give one of them another URI, or keep one method",
                    uri.value(),
                    first.ident
                ),
            ));
            continue;
        }
        seen.insert(uri.value(), method);
    }
}

/// ```ignore
/// #[rpc(mcp(complete(prompt = "review", argument = "language")))]
/// fn languages(&self, value: String) -> Vec<String>;
/// #[rpc(mcp(complete(prompt = "review", argument = "language")))]
/// fn more_languages(&self, value: String) -> Vec<String>;   // which one answers?
/// ```
fn duplicate_completions(cx: &Ctxt, service: &Service) {
    let mut seen: HashMap<(bool, String, String), &Method> = HashMap::new();
    for method in service.methods.iter().filter(|method| offered(method)) {
        let McpKind::Complete { target, argument, .. } = &method.mcp.kind else { continue };
        let (prompt, name) = match target {
            CompletionTarget::Prompt(name) => (true, name.value()),
            CompletionTarget::Resource(template) => (false, template.value()),
        };
        let key = (prompt, name, argument.value());
        if let Some(first) = seen.get(&key) {
            let (_, name, argument_name) = &key;
            let whose = if prompt { format!("the prompt `{name}`") } else { format!("the resource template {name:?}") };
            cx.syn_error(syn::Error::new(
                argument.span(),
                format!(
                    "duplicate completion: method `{}` completes the argument `{argument_name}` of {whose} already; keep one of them",
                    first.ident
                ),
            ));
            continue;
        }
        seen.insert(key, method);
    }
}

/// ```ignore
/// #[rpc(mcp(prompt), unsubscribe = "unsubscribe_ticks")]
/// async fn ticks(&self, sink: SubscriptionSink<u64>);   // a prompt has one answer
/// ```
fn mcp_kind_is_no_subscription(cx: &Ctxt, method: &Method) {
    let (Some(span), true) = (method.mcp.kind.key_span(), method.item().is_some()) else { return };
    cx.syn_error(syn::Error::new(
        span,
        format!(
            "{} cannot be put on a subscription method: over MCP {} is one request answered by one result, while a subscription answers with an id and sends its items after; remove it, or declare it on a method of its own",
            method.mcp.kind.written(),
            method.mcp.kind.noun()
        ),
    ));
}

/// What `method` is over MCP, unless it is a notification or a
/// subscription, whose `mcp(...)` is an error of its own (so that one
/// mistake is reported once).
fn kind_to_check(method: &Method) -> Option<&McpKind> {
    (method.notification.is_none() && method.item().is_none()).then_some(&method.mcp.kind)
}

/// `a`, `b` as "`a`, `b`"; nothing as "none".
fn listed<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let names: Vec<String> = names.into_iter().map(|name| format!("`{name}`")).collect();
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

/// ```ignore
/// #[rpc(mcp(resource = "notes://{id}"))]
/// fn note(&self, key: u64) -> String;          // `id` is no param, `key` no variable
/// #[rpc(mcp(resource = "notes://all"))]
/// fn all(&self, limit: u32) -> String;         // a fixed resource takes no params
/// ```
fn resource_params(cx: &Ctxt, method: &Method) {
    let Some(McpKind::Resource { uri, variables, .. }) = kind_to_check(method) else { return };
    let params: Vec<&Param> = method.wire_params().collect();
    let ident = &method.ident;
    let template = uri.value();
    if variables.is_empty() {
        for param in params {
            cx.syn_error(syn::Error::new(
                param.name_span,
                format!(
                    "`{ident}` reads the fixed resource {template:?}, which has no variables, so it takes no params: remove `{}`, or make it a variable of the URI template, as in `{{{}}}`",
                    param.ident, param.wire_name
                ),
            ));
        }
        return;
    }
    let (variable_list, param_list) =
        (listed(variables.iter().map(String::as_str)), listed(params.iter().map(|param| param.wire_name.as_str())));
    for variable in variables.iter().filter(|variable| !params.iter().any(|param| param.wire_name == **variable)) {
        cx.syn_error(syn::Error::new(
            uri.span(),
            format!(
                "the variable `{variable}` of the resource URI template {template:?} is not a param of `{ident}`: each variable is read into the param of its name (a param's wire name, which `#[rpc(name = \"...\")]` on it sets); the variables are {variable_list}, the params are {param_list}"
            ),
        ));
    }
    for param in params.iter().filter(|param| !variables.contains(&param.wire_name)) {
        cx.syn_error(syn::Error::new(
            param.name_span,
            format!(
                "the param `{}` of `{ident}` is not a variable of the resource URI template {template:?}: a resource method's params are read from its URI; the variables are {variable_list}, the params are {param_list}; add `{{{}}}` to the template, or remove the param",
                param.wire_name, param.wire_name
            ),
        ));
    }
}

/// ```ignore
/// #[rpc(mcp(resource_list))]
/// fn notes(&self, folder: String) -> Vec<Resource>;   // `resources/list` has no arguments to give
/// ```
fn resource_list_takes_no_params(cx: &Ctxt, method: &Method) {
    let (Some(McpKind::ResourceList(_)), Some(param)) = (kind_to_check(method), method.wire_params().next()) else {
        return;
    };
    cx.syn_error(syn::Error::new(
        param.name_span,
        format!(
            "a `resource_list` method takes no params: `resources/list` calls it with none; remove `{}`",
            param.ident
        ),
    ));
}

/// ```ignore
/// #[rpc(mcp(complete(prompt = "review", argument = "language")))]
/// fn languages(&self) -> Vec<String>;   // the value being completed?
/// ```
fn completion_params(cx: &Ctxt, method: &Method) {
    let Some(McpKind::Complete { .. }) = kind_to_check(method) else { return };
    let params: Vec<&Param> = method.wire_params().collect();
    let span = match params.get(2) {
        Some(third) => third.name_span,
        None if params.is_empty() => method.ident.span(),
        None => return,
    };
    let ident = &method.ident;
    cx.syn_error(syn::Error::new(
        span,
        format!(
            "a completion method takes the partial value of the argument it completes, and may take the other arguments already given, as a map: write `fn {ident}(&self, value: String) -> Vec<String>` or `fn {ident}(&self, value: String, arguments: HashMap<String, String>) -> Vec<String>` (`{ident}` takes {} params)",
            params.len()
        ),
    ));
}

/// ```ignore
/// #[rpc(mcp(prompt))]
/// fn review(&self, code: String) -> String;
/// #[rpc(mcp(complete(prompt = "reveiw", argument = "code")))]
/// fn codes(&self, value: String) -> Vec<String>;      // no prompt `reveiw`
/// #[rpc(mcp(complete(prompt = "review", argument = "language")))]
/// fn languages(&self, value: String) -> Vec<String>;  // `review` has no argument `language`
/// ```
///
/// A prompt is found by the name the runtime offers it under (see
/// [`mcp_name`]), a resource template by its `resource` string as
/// written.
fn completion_target(cx: &Ctxt, service: &Service, method: &Method) {
    let Some(McpKind::Complete { target, argument, .. }) = kind_to_check(method) else { return };
    // A malformed `mcp(...)` may have been the target: reported already.
    if service.methods.iter().any(|method| method.mcp.malformed) {
        return;
    }
    let argument_name = argument.value();
    match target {
        CompletionTarget::Prompt(name) => {
            let prompts: Vec<(&Method, String)> = service
                .methods
                .iter()
                .filter(|method| matches!(method.mcp.kind, McpKind::Prompt(_)))
                .map(|method| (method, mcp_name(method).0))
                .collect();
            let value = name.value();
            let Some((prompt, _)) = prompts.iter().find(|(_, prompt)| *prompt == value) else {
                cx.syn_error(syn::Error::new(
                    name.span(),
                    format!(
                        "there is no prompt `{value}` in this trait: `complete(prompt = ...)` names a method of the same trait marked `#[rpc(mcp(prompt))]`, by its `mcp(name)` if it has one, else by its method name on the wire; the prompts are {}",
                        listed(prompts.iter().map(|(_, name)| name.as_str()))
                    ),
                ));
                return;
            };
            if prompt.wire_params().any(|param| param.wire_name == argument_name) {
                return;
            }
            cx.syn_error(syn::Error::new(
                argument.span(),
                format!(
                    "the prompt `{value}` has no argument `{argument_name}`: a prompt's arguments are its method's params, which are {}; name one of them",
                    listed(prompt.wire_params().map(|param| param.wire_name.as_str()))
                ),
            ));
        }
        CompletionTarget::Resource(template) => {
            let templates: Vec<(String, &[String])> = service
                .methods
                .iter()
                .filter_map(|method| match &method.mcp.kind {
                    McpKind::Resource { uri, variables, .. } => Some((uri.value(), variables.as_slice())),
                    _ => None,
                })
                .collect();
            let value = template.value();
            let Some((_, variables)) = templates.iter().find(|(uri, _)| *uri == value) else {
                let with_variables = templates.iter().filter(|(_, variables)| !variables.is_empty());
                cx.syn_error(syn::Error::new(
                    template.span(),
                    format!(
                        "there is no resource template {value:?} in this trait: `complete(resource = ...)` names a method of the same trait by its `mcp(resource = ...)`, written the same; the resource templates are {}",
                        listed(with_variables.map(|(uri, _)| uri.as_str()))
                    ),
                ));
                return;
            };
            if variables.contains(&argument_name) {
                return;
            }
            let error = if variables.is_empty() {
                syn::Error::new(
                    template.span(),
                    format!(
                        "the resource {value:?} has no variables: it is one fixed resource, with nothing to complete; name a resource template (a URI with `{{variables}}`)"
                    ),
                )
            } else {
                syn::Error::new(
                    argument.span(),
                    format!(
                        "the resource template {value:?} has no variable `{argument_name}`: the arguments of a resource template are its variables, which are {}; name one of them",
                        listed(variables.iter().map(String::as_str))
                    ),
                )
            };
            cx.syn_error(error);
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
/// async fn ticks(&self, sink: SubscriptionSink<u64>);   // how does the client stop it?
/// ```
fn sink_needs_unsubscribe(cx: &Ctxt, method: &Method) {
    let Some(sink) = method.params.iter().find(|param| param.sink.is_some()) else { return };
    if method.unsubscribe.is_none() && !method.unsubscribe_malformed {
        cx.error_spanned_by(
            &sink.ty,
            format!(
                "`{}` opens a subscription (it takes a `{}`): name the method that ends it with `#[rpc(unsubscribe = \"unsubscribe_{}\")]`",
                method.ident,
                if sink.pending { "PendingSubscription" } else { "SubscriptionSink" },
                method.ident
            ),
        );
    }
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
