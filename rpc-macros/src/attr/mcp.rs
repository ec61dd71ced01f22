//! `mcp(...)` on a method: whether and how it appears over MCP, as a tool
//! (the default), a resource, a resource list, a prompt or a completion.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::LitStr;

use super::{
    given_once, span_of, string_value, unknown_key, ARGUMENT, COMPLETE, COMPLETE_KEYS, DESTRUCTIVE, HIDDEN, IDEMPOTENT,
    MCP_KEYS, MIME_TYPE, NAME, OPEN_WORLD, PROMPT, READ_ONLY, RESOURCE, RESOURCE_LIST, TITLE,
};

/// `mcp(hidden)` or `mcp(name = "...", title = "...", read_only,
/// destructive = false, idempotent, open_world)` on a method: its MCP tool;
/// or `mcp(resource = "...", mime_type = "...")`, `mcp(resource_list)`,
/// `mcp(prompt)`, `mcp(complete(...))`: what else it is over MCP.
#[derive(Default)]
pub struct McpAttrs {
    /// Where `mcp` was written, if it was.
    pub span: Option<Span>,
    /// `mcp(...)` was given but could not be read (reported already): no
    /// second error about what it would have declared.
    pub malformed: bool,
    pub hidden: bool,
    /// What the method is over MCP.
    pub kind: McpKind,
    /// `name = "..."`: the tool's (resource's, prompt's) name, when not
    /// the method's wire name.
    pub name: Option<LitStr>,
    pub title: Option<LitStr>,
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
}

/// What a method is over MCP, with where each part was written.
#[derive(Default)]
pub enum McpKind {
    /// No kind key: a tool.
    #[default]
    Tool,
    /// `resource = "notes://{id}"`, with `mime_type = "..."` if given.
    Resource {
        /// The `resource` key.
        key: Span,
        uri: LitStr,
        /// The template's variables, in order (none for a fixed URI).
        variables: Vec<String>,
        mime_type: Option<LitStr>,
    },
    /// `resource_list`: where it was written.
    ResourceList(Span),
    /// `prompt`: where it was written.
    Prompt(Span),
    /// `complete(prompt = "..", argument = "..")` or
    /// `complete(resource = "..", argument = "..")`.
    Complete {
        /// The `complete` key.
        key: Span,
        target: CompletionTarget,
        argument: LitStr,
    },
}

/// What `complete(...)` completes an argument of.
pub enum CompletionTarget {
    /// `prompt = "review"`: the prompt of that name.
    Prompt(LitStr),
    /// `resource = "notes://{id}"`: the resource template written so.
    Resource(LitStr),
}

impl McpKind {
    /// The key that gave the kind; `None` for a tool.
    pub fn key_span(&self) -> Option<Span> {
        match self {
            McpKind::Tool => None,
            McpKind::Resource { key, .. } | McpKind::Complete { key, .. } => Some(*key),
            McpKind::ResourceList(key) | McpKind::Prompt(key) => Some(*key),
        }
    }

    /// What the method is, for messages: "a prompt".
    pub fn noun(&self) -> &'static str {
        match self {
            McpKind::Tool => "a tool",
            McpKind::Resource { .. } => "a resource",
            McpKind::ResourceList(_) => "a resource list",
            McpKind::Prompt(_) => "a prompt",
            McpKind::Complete { .. } => "a completion",
        }
    }

    /// How the kind is written, for messages: "`mcp(prompt)`".
    pub fn written(&self) -> &'static str {
        match self {
            McpKind::Tool => "`mcp(...)`",
            McpKind::Resource { .. } => "`mcp(resource = ...)`",
            McpKind::ResourceList(_) => "`mcp(resource_list)`",
            McpKind::Prompt(_) => "`mcp(prompt)`",
            McpKind::Complete { .. } => "`mcp(complete(...))`",
        }
    }
}

/// The keys that make a method something other than a tool.
const KIND_KEYS: &[&str] = &[RESOURCE, RESOURCE_LIST, PROMPT, COMPLETE];
/// The keys that are hints about a tool.
const HINT_KEYS: &[&str] = &[READ_ONLY, DESTRUCTIVE, IDEMPOTENT, OPEN_WORLD];

/// `mcp(hidden)`, `mcp(title = "Add", read_only, open_world = false)`,
/// `mcp(resource = "notes://{id}", mime_type = "text/markdown")`,
/// `mcp(resource_list)`, `mcp(prompt)`,
/// `mcp(complete(prompt = "review", argument = "language"))`.
pub(super) fn parse_mcp(meta: &ParseNestedMeta<'_>) -> syn::Result<McpAttrs> {
    let mut out = McpAttrs { span: Some(span_of(meta)), ..McpAttrs::default() };
    if !meta.input.peek(syn::token::Paren) {
        return Err(syn::Error::new(
            span_of(meta),
            format!("`mcp` takes options in parentheses, such as `mcp(hidden)` or `mcp(title = \"...\", read_only)`; expected one of: {}", MCP_KEYS.join(", ")),
        ));
    }
    let mut seen = Vec::new();
    let mut hidden = None;
    // Every key but `hidden`, as written, with where.
    let mut others: Vec<(&'static str, Span)> = Vec::new();
    let mut resource = None;
    let mut mime_type: Option<(Span, LitStr)> = None;
    let mut complete = None;
    meta.parse_nested_meta(|inner| {
        given_once(&inner, &mut seen)?;
        let Some(key) = MCP_KEYS.iter().copied().find(|key| inner.path.is_ident(key)) else {
            return Err(unknown_key(&inner, "in `mcp(...)`", MCP_KEYS));
        };
        let span = span_of(&inner);
        match key {
            HIDDEN => {
                mcp_flag(&inner, HIDDEN)?;
                hidden = Some(span);
                out.hidden = true;
                return Ok(());
            }
            NAME => out.name = Some(string_value(&inner, NAME, "\"list_items\"")?),
            TITLE => out.title = Some(string_value(&inner, TITLE, "\"Add two numbers\"")?),
            READ_ONLY => out.read_only = Some(hint(&inner, READ_ONLY)?),
            DESTRUCTIVE => out.destructive = Some(hint(&inner, DESTRUCTIVE)?),
            IDEMPOTENT => out.idempotent = Some(hint(&inner, IDEMPOTENT)?),
            OPEN_WORLD => out.open_world = Some(hint(&inner, OPEN_WORLD)?),
            RESOURCE => {
                let uri = string_value(&inner, RESOURCE, "\"notes://{id}\"")?;
                let variables = template_variables(&uri)?;
                resource = Some((span, uri, variables));
            }
            MIME_TYPE => {
                let value = string_value(&inner, MIME_TYPE, "\"text/markdown\"")?;
                check_mime_type(&value)?;
                mime_type = Some((span, value));
            }
            RESOURCE_LIST => out.kind = McpKind::ResourceList(mcp_flag(&inner, RESOURCE_LIST)?),
            PROMPT => out.kind = McpKind::Prompt(mcp_flag(&inner, PROMPT)?),
            COMPLETE => complete = Some(parse_complete(&inner)?),
            _ => unreachable!("every key of MCP_KEYS is handled"),
        }
        others.push((key, span));
        Ok(())
    })?;
    if let (Some(hidden), Some((key, span))) = (hidden, others.first()) {
        let mut err = syn::Error::new(
            *span,
            format!("`{key}` has no effect on a method hidden from MCP (`mcp(hidden)`): it is offered over MCP as nothing at all (no tool, resource or prompt); remove `{key}` or `hidden`"),
        );
        err.combine(syn::Error::new(hidden, "`hidden` given here"));
        return Err(err);
    }
    let mut kinds = others.iter().filter(|(key, _)| KIND_KEYS.contains(key));
    if let (Some((first, first_span)), Some((second, second_span))) = (kinds.next(), kinds.next()) {
        let mut err = syn::Error::new(
            *second_span,
            format!("`{second}` and `{first}` cannot both be given: a method is one thing over MCP (a tool, a resource, a resource list, a prompt or a completion); keep one of them, and declare the other on a method of its own"),
        );
        err.combine(syn::Error::new(*first_span, format!("`{first}` given here")));
        return Err(err);
    }
    if let Some((key, uri, variables)) = resource {
        out.kind = McpKind::Resource { key, uri, variables, mime_type: mime_type.map(|(_, value)| value) };
    } else if let Some((span, _)) = mime_type {
        return Err(syn::Error::new(
            span,
            "`mime_type` is the MIME type of what a resource method reads, and this method reads no resource: add `resource = \"notes://{id}\"` beside it, or remove `mime_type`",
        ));
    } else if let Some((key, target, argument)) = complete {
        out.kind = McpKind::Complete { key, target, argument };
    }
    applicable(&out.kind, &others)?;
    if let Some(title) = out.title.as_ref().filter(|title| title.value().trim().is_empty()) {
        let owner = out.kind.noun().trim_start_matches("a ");
        return Err(syn::Error::new(
            title.span(),
            format!("the {owner}'s `title` must not be empty: write a name people read, or remove the key"),
        ));
    }
    Ok(out)
}

/// Rejects the keys that describe something the method is not: a tool
/// hint on a prompt, a name on a resource list.
fn applicable(kind: &McpKind, keys: &[(&'static str, Span)]) -> syn::Result<()> {
    let (Some(kind_span), Some(kind_key)) = (kind.key_span(), keys.iter().find(|(key, _)| KIND_KEYS.contains(key)))
    else {
        return Ok(());
    };
    let (noun, written) = (kind.noun(), kind.written());
    for (key, span) in keys {
        let message = if HINT_KEYS.contains(key) {
            format!("`{key}` is a hint about a tool, and this method is {noun} ({written}), not a tool: remove `{key}`")
        } else if [NAME, TITLE].contains(key) && matches!(kind, McpKind::ResourceList(_)) {
            format!("`{key}` has no effect on a resource list ({written}): the method is not offered under a name of its own, the resources it returns are, each with its own name and title; remove `{key}`")
        } else if [NAME, TITLE].contains(key) && matches!(kind, McpKind::Complete { .. }) {
            format!("`{key}` has no effect on a completion ({written}): the method is not offered under a name of its own, it answers `completion/complete` for the argument it names; remove `{key}`")
        } else {
            continue;
        };
        let mut err = syn::Error::new(*span, message);
        err.combine(syn::Error::new(kind_span, format!("`{}` given here", kind_key.0)));
        return Err(err);
    }
    Ok(())
}

/// A key of `mcp(...)` that takes no value: `hidden`, `prompt`.
fn mcp_flag(meta: &ParseNestedMeta<'_>, key: &str) -> syn::Result<Span> {
    if meta.input.peek(syn::Token![=]) || meta.input.peek(syn::token::Paren) {
        return Err(syn::Error::new(
            span_of(meta),
            format!("`{key}` is a flag and takes no value: write `#[rpc(mcp({key}))]`"),
        ));
    }
    Ok(span_of(meta))
}

/// A tool hint: `read_only` (true) or `read_only = false`.
fn hint(meta: &ParseNestedMeta<'_>, key: &str) -> syn::Result<bool> {
    if !meta.input.peek(syn::Token![=]) {
        if meta.input.peek(syn::token::Paren) {
            return Err(syn::Error::new(
                span_of(meta),
                format!("`{key}` takes a bool: write `{key}` or `{key} = false`"),
            ));
        }
        return Ok(true);
    }
    let value = meta.value()?;
    let span = value.span();
    value
        .parse::<syn::LitBool>()
        .map(|lit| lit.value)
        .map_err(|_| syn::Error::new(span, format!("`{key}` takes a bool: write `{key}` or `{key} = false`")))
}

/// `complete(prompt = "review", argument = "language")` or
/// `complete(resource = "notes://{id}", argument = "id")`: the `complete`
/// key's span, the target and the argument.
fn parse_complete(meta: &ParseNestedMeta<'_>) -> syn::Result<(Span, CompletionTarget, LitStr)> {
    let span = span_of(meta);
    if !meta.input.peek(syn::token::Paren) {
        return Err(syn::Error::new(
            span,
            "`complete` takes what it completes in parentheses: write `complete(prompt = \"review\", argument = \"language\")` or `complete(resource = \"notes://{id}\", argument = \"id\")`",
        ));
    }
    let mut seen = Vec::new();
    let mut target: Option<(Span, CompletionTarget)> = None;
    let mut argument = None;
    meta.parse_nested_meta(|inner| {
        given_once(&inner, &mut seen)?;
        let key_span = span_of(&inner);
        let given = if inner.path.is_ident(PROMPT) {
            (PROMPT, CompletionTarget::Prompt(string_value(&inner, PROMPT, "\"review\"")?))
        } else if inner.path.is_ident(RESOURCE) {
            (RESOURCE, CompletionTarget::Resource(string_value(&inner, RESOURCE, "\"notes://{id}\"")?))
        } else if inner.path.is_ident(ARGUMENT) {
            argument = Some(string_value(&inner, ARGUMENT, "\"language\"")?);
            return Ok(());
        } else {
            return Err(unknown_key(&inner, "in `mcp(complete(...))`", COMPLETE_KEYS));
        };
        if let Some((first_span, first)) = &target {
            let first = match first {
                CompletionTarget::Prompt(_) => PROMPT,
                CompletionTarget::Resource(_) => RESOURCE,
            };
            let mut err = syn::Error::new(
                key_span,
                "`complete` takes one of `prompt` and `resource`, not both: a completion method completes an argument of one prompt or one variable of one resource template; keep one",
            );
            err.combine(syn::Error::new(*first_span, format!("`{first}` given here")));
            return Err(err);
        }
        target = Some((key_span, given.1));
        Ok(())
    })?;
    let Some((_, target)) = target else {
        return Err(syn::Error::new(
            span,
            "`complete(...)` needs what it completes: add `prompt = \"...\"` (the name of a prompt of this trait) or `resource = \"...\"` (the URI template of a resource of this trait)",
        ));
    };
    let Some(argument) = argument else {
        return Err(syn::Error::new(
            span,
            "`complete(...)` needs `argument = \"...\"`: the prompt argument or template variable it completes, as in `complete(prompt = \"review\", argument = \"language\")`",
        ));
    };
    Ok((span, target, argument))
}

/// `type/subtype`, as in `text/markdown`.
fn check_mime_type(value: &LitStr) -> syn::Result<()> {
    let text = value.value();
    let well_formed = match text.split_once('/') {
        Some((kind, subtype)) => {
            !kind.is_empty() && !subtype.is_empty() && !text.chars().any(|c| c.is_whitespace() || c.is_control())
        }
        None => false,
    };
    if well_formed {
        return Ok(());
    }
    Err(syn::Error::new(
        value.span(),
        format!("the MIME type {text:?} is not of the form `type/subtype`: write one such as `text/markdown` or `application/json`"),
    ))
}

/// The variables of a resource URI or URI template, in order: an absolute
/// URI (it starts with a scheme) whose only RFC 6570 expressions are
/// `{var}` and `{+var}`, each variable once, no two of them side by side.
fn template_variables(uri: &LitStr) -> syn::Result<Vec<String>> {
    let text = uri.value();
    let error = |message: String| Err(syn::Error::new(uri.span(), message));
    let scheme = text.split_once(':').map(|(scheme, _)| scheme).filter(|scheme| {
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
    });
    if scheme.is_none() {
        return error(format!(
            "the resource URI {text:?} does not start with a scheme (`notes:`, `file:`, ...): write an absolute URI or URI template, such as `notes://{{id}}` or `file:///{{+path}}`"
        ));
    }
    let mut variables: Vec<String> = Vec::new();
    // The end of the last expression, and the expression.
    let mut last: Option<(usize, &str)> = None;
    let mut at = 0;
    while let Some(offset) = text[at..].find(['{', '}']) {
        let open = at + offset;
        let close = match text[open..].starts_with('{').then(|| text[open + 1..].find(['{', '}'])).flatten() {
            Some(offset) if text[open + 1 + offset..].starts_with('}') => open + 1 + offset,
            _ => {
                return error(format!(
                    "the resource URI template {text:?} has unbalanced braces: each variable is a name in one pair of braces, as in `notes://{{id}}`, and braces do not nest nor stand alone"
                ))
            }
        };
        let expression = &text[open..=close];
        let inner = &text[open + 1..close];
        let name = inner.strip_prefix('+').unwrap_or(inner);
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return error(format!(
                "the resource URI template {text:?} has `{expression}`, which is not supported: write `{{name}}` for a variable that matches no `/`, or `{{+name}}` for one that may match `/`, with a name of `A-Z`, `a-z`, `0-9` and `_` (other operators such as `{{?q}}`, `{{/x}}` or `{{#x}}`, lists such as `{{a,b}}` and modifiers such as `{{x*}}` or `{{x:3}}` are not supported)"
            ));
        }
        if let Some((_, previous)) = last.filter(|(end, _)| *end == open) {
            return error(format!(
                "the resource URI template {text:?} has `{previous}` and `{expression}` with nothing between them, so a URI cannot be split between the two: put a literal between them, as in `{previous}/{expression}`"
            ));
        }
        if variables.iter().any(|known| known == name) {
            return error(format!(
                "the variable `{name}` appears twice in the resource URI template {text:?}: each variable is one param of the method; use each name once"
            ));
        }
        variables.push(name.to_owned());
        last = Some((close + 1, expression));
        at = close + 1;
    }
    Ok(variables)
}
