//! The rules of `#[rpc(mcp(..))]` that need the whole trait: names of
//! tools, prompts and resources, what each kind of method takes, and the
//! targets of completions. Each function rejects one kind of mistake; its
//! comment shows the user code it rejects.

use std::collections::HashMap;

use proc_macro2::Span;

use crate::ast::{Method, Param, Service};
use crate::attr::{CompletionTarget, McpKind};
use crate::ctxt::Ctxt;

/// The longest tool name model APIs take.
const TOOL_NAME_MAX: usize = 64;

/// ```ignore
/// #[rpc(mcp(name = "items.list"))]
/// fn list(&self) -> Vec<u8>;   // model APIs take only [a-zA-Z0-9_-]{1,64}
/// #[rpc(mcp(name = "list"))]
/// async fn ticks(&self, sink: SubscriptionSink<u64>);   // a subscription is no tool
/// ```
pub(super) fn invalid_tool_name(cx: &Ctxt, method: &Method) {
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
pub(super) fn invalid_prompt_or_resource_name(cx: &Ctxt, method: &Method) {
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
pub(super) fn mcp_name(method: &Method) -> (String, Span) {
    match &method.mcp.name {
        Some(name) => (name.value(), name.span()),
        None => (method.wire_name.clone(), method.name_span),
    }
}

/// Whether `method` is offered over MCP at all, as what its `mcp(...)`
/// says (a notification or a subscription is an error of its own).
pub(super) fn offered(method: &Method) -> bool {
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
pub(super) fn duplicate_mcp_names(cx: &Ctxt, service: &Service, what: &str, is_kind: fn(&McpKind) -> bool) {
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
pub(super) fn duplicate_resources(cx: &Ctxt, service: &Service) {
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
pub(super) fn duplicate_completions(cx: &Ctxt, service: &Service) {
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
pub(super) fn mcp_kind_is_no_subscription(cx: &Ctxt, method: &Method) {
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
pub(super) fn kind_to_check(method: &Method) -> Option<&McpKind> {
    (method.notification.is_none() && method.item().is_none()).then_some(&method.mcp.kind)
}

/// `a`, `b` as "`a`, `b`"; nothing as "none".
pub(super) fn listed<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
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
pub(super) fn resource_params(cx: &Ctxt, method: &Method) {
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
pub(super) fn resource_list_takes_no_params(cx: &Ctxt, method: &Method) {
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
pub(super) fn completion_params(cx: &Ctxt, method: &Method) {
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
pub(super) fn completion_target(cx: &Ctxt, service: &Service, method: &Method) {
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
