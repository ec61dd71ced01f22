//! Resources: methods marked `#[rpc(mcp(resource = "<uri template>"))]`
//! read them (`resources/read`), fixed ones and the entries of
//! `#[rpc(mcp(resource_list))]` methods are listed (`resources/list`),
//! templates are listed too (`resources/templates/list`).

use std::sync::{Arc, OnceLock};

use serde::Deserialize;
use serde_json::Map;
use serde_json::value::RawValue;

use super::arguments::{Extras, Reply, StringParam, invoke, params_from_strings, run, string_params, unexpected};
use super::content::{Contents, Resource};
use super::revision::Revision;
use super::session::Meta;
use super::template::{Template, Values};
use super::tools::{group, page, visible};
use super::written::{self, Object};
use super::{Answered, ToolServer, list_request, read};
use crate::catalog::{Catalog, McpKind, MethodInfo};
use crate::dispatch::context::Context;
use crate::dispatch::params::Params;
use crate::dispatch::permissions::Permissions;
use crate::dispatch::router::written_result;
use crate::spec::Requirement;
use crate::wire::{ErrorObject, INVALID_PARAMS};

/// MCP's "resource not found" through 2025-11-25 (2026-07-28 answers
/// `-32602`, invalid params, instead).
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// One resource method: a fixed URI or a template.
pub(crate) struct Entry {
    pub(crate) method: &'static MethodInfo,
    /// The URI, or URI template, as declared.
    pub(crate) uri: &'static str,
    template: Template,
    mime_type: Option<&'static str>,
    params: Vec<StringParam>,
    reply: Reply,
}

/// Every resource method of a router, and the methods that list more.
#[derive(Default)]
pub(crate) struct Resources {
    entries: Vec<Entry>,
    listers: Vec<&'static MethodInfo>,
    /// Per group of revisions that describe them alike.
    listings: [OnceLock<Listing>; 4],
}

/// The fixed resources' JSON and the templates' JSON.
struct Listing {
    fixed: Vec<Box<RawValue>>,
    templates: Vec<Box<RawValue>>,
}

impl Resources {
    pub(crate) fn new(catalog: &Catalog, served: impl Fn(&str) -> bool) -> Resources {
        let mut resources = Resources::default();
        for method in super::offered(catalog, &served) {
            match method.tool.kind {
                McpKind::Resource { uri, mime_type } => {
                    let Some(template) = Template::parse(uri) else {
                        tracing::warn!(
                            method = method.spec.name,
                            uri,
                            "not offered as an MCP resource: not a URI template this server reads ({{var}} and {{+var}})"
                        );
                        continue;
                    };
                    if resources.entries.iter().any(|entry| entry.uri == uri) {
                        tracing::warn!(
                            method = method.spec.name,
                            uri,
                            "not offered as an MCP resource: another method reads this URI"
                        );
                        continue;
                    }
                    let (params, reply) = (string_params(method), Reply::of(method));
                    resources.entries.push(Entry { method, uri, template, mime_type, params, reply });
                }
                McpKind::ResourceList => resources.listers.push(method),
                _ => {}
            }
        }
        resources
    }

    /// Whether there is anything to list or read.
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.listers.is_empty()
    }

    /// The template `uri` as declared, if a resource method has it.
    pub(crate) fn template(&self, uri: &str) -> Option<&Entry> {
        self.entries.iter().find(|entry| entry.uri == uri)
    }

    /// Whether a resource method reads `uri`.
    pub(crate) fn reads(&self, uri: &str) -> bool {
        self.find(uri).is_some()
    }

    /// The resource method that reads `uri` (a fixed URI first, then the
    /// templates in declaration order), with the variables' values.
    fn find<'u>(&'u self, uri: &'u str) -> Option<(&'u Entry, Values<'u, 'u>)> {
        let fixed = self.entries.iter().find(|entry| entry.template.is_fixed() && entry.uri == uri);
        if let Some(entry) = fixed {
            return Some((entry, Vec::new()));
        }
        self.entries
            .iter()
            .filter(|entry| !entry.template.is_fixed())
            .find_map(|entry| Some((entry, entry.template.matches(uri)?)))
    }

    /// Whether the caller of `cx` may read `uri` (and so hear of its
    /// changes): the permission error of its method if not. A URI no
    /// method reads is left to the caller's own checks.
    pub(crate) fn may_read(&self, uri: &str, cx: &Context) -> Result<(), ErrorObject> {
        match self.find(uri) {
            Some((entry, _)) => match &entry.method.spec.requires {
                Some(requirement) if !Permissions::of(cx).allow(Some(requirement)) => {
                    Err(crate::dispatch::permissions::denied(entry.method.spec.name, requirement))
                }
                _ => Ok(()),
            },
            None => Ok(()),
        }
    }

    /// What the methods of the fixed resources require, in listing order.
    fn fixed_requirements(&self) -> impl Iterator<Item = Option<&'static Requirement>> + Clone + '_ {
        self.entries.iter().filter(|entry| entry.template.is_fixed()).map(|entry| entry.method.spec.requires.as_ref())
    }

    /// What the methods of the templates require, in listing order.
    fn template_requirements(&self) -> impl Iterator<Item = Option<&'static Requirement>> + Clone + '_ {
        self.entries.iter().filter(|entry| !entry.template.is_fixed()).map(|entry| entry.method.spec.requires.as_ref())
    }

    fn listing(&self, revision: Revision) -> &Listing {
        self.listings[group(revision)].get_or_init(|| {
            let (fixed, templates): (Vec<&Entry>, Vec<&Entry>) =
                self.entries.iter().partition(|entry| entry.template.is_fixed());
            let fixed = fixed.into_iter().map(|entry| entry.describe(revision, "uri")).collect();
            let templates = templates.into_iter().map(|entry| entry.describe(revision, "uriTemplate")).collect();
            Listing { fixed, templates }
        })
    }
}

impl Entry {
    /// The resource (`key` = `uri`) or template (`uriTemplate`) as the
    /// lists show it under `revision`.
    fn describe(&self, revision: Revision, key: &str) -> Box<RawValue> {
        let mut out = Map::new();
        out.insert(key.into(), self.uri.into());
        super::describe(&mut out, self.method, revision);
        if let Some(mime_type) = self.mime_type {
            out.insert("mimeType".into(), mime_type.into());
        }
        raw(&out)
    }
}

fn raw(value: &impl serde::Serialize) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).unwrap_or_else(|err| unreachable!("JSON values serialize: {err}"))
}

/// A listed resource as `revision` has it (titles from 2025-06-18 on).
fn listed(mut resource: Resource, revision: Revision) -> Box<RawValue> {
    if !revision.has_structured_output() {
        resource.title = None;
    }
    raw(&resource)
}

/// `resources/list`: the fixed resources, then what the listing methods
/// answer, one page at a time.
pub(crate) fn list(server: &Arc<ToolServer>, params: &Params<'_>, cx: &Context, out: &mut Vec<u8>) -> Answered {
    let (cursor, revision) = list_request(params, cx, "resources/list")?;
    let resources = &server.resources;
    let permissions = Permissions::of(cx);
    let fixed = visible(&resources.listing(revision).fixed, resources.fixed_requirements(), permissions);
    if resources.listers.is_empty() {
        let (items, next) = page(&fixed, cursor.as_deref(), server.page_size, "resources")?;
        written::list_page(out, server, revision, "resources", items, next.as_deref());
        return Ok(None);
    }
    let mut all = fixed.into_owned();
    let (server, cx) = (Arc::clone(server), cx.clone());
    Ok(Some(Box::pin(async move {
        let permissions = Permissions::of(&cx);
        let listers = server.resources.listers.iter().filter(|lister| permissions.allow(lister.spec.requires.as_ref()));
        for lister in listers {
            let name = lister.spec.name;
            let value = run(&server, name, None, &cx).await?;
            let entries: Vec<Resource> =
                serde_json::from_str(value.get()).map_err(|err| unexpected(name, "a list of resources", &err))?;
            all.extend(entries.into_iter().map(|entry| listed(entry, revision)));
        }
        let (items, next) = page(&all, cursor.as_deref(), server.page_size, "resources")?;
        let mut out = Vec::new();
        written::list_page(&mut out, &server, revision, "resources", items, next.as_deref());
        written_result(out)
    })))
}

/// `resources/templates/list`: the resource templates.
pub(crate) fn templates(server: &Arc<ToolServer>, params: &Params<'_>, cx: &Context, out: &mut Vec<u8>) -> Answered {
    let (cursor, revision) = list_request(params, cx, "resources/templates/list")?;
    let resources = &server.resources;
    let templates =
        visible(&resources.listing(revision).templates, resources.template_requirements(), Permissions::of(cx));
    let (templates, next) = page(&templates, cursor.as_deref(), server.page_size, "templates")?;
    written::list_page(out, server, revision, "resourceTemplates", templates, next.as_deref());
    Ok(None)
}

#[derive(Deserialize)]
struct ReadParams<'a> {
    #[serde(default)]
    uri: Option<String>,
    #[serde(borrow, default, rename = "_meta")]
    meta: Option<&'a RawValue>,
}

/// `resources/read`: the method whose URI matches reads it; the answer
/// is written into `out`.
pub(crate) fn read_resource(
    server: &Arc<ToolServer>,
    params: &Params<'_>,
    cx: &Context,
    out: &mut Vec<u8>,
) -> Answered {
    let request: ReadParams<'_> = read(params, "resources/read")?;
    let meta = Meta::read(request.meta);
    let caller = meta.caller(cx)?;
    let revision = caller.revision;
    let Some(uri) = request.uri else {
        return Err(ErrorObject::new(INVALID_PARAMS, "Invalid params: `resources/read` needs the resource's `uri`"));
    };
    let Some((entry, values)) = server.resources.find(&uri) else {
        return Err(not_found(revision, &uri));
    };
    let extras = Extras::of(&meta, &caller, params, ("resources/read", &uri, None))?;
    let params = params_from_strings(&entry.params, &values);
    let (name, mime_type, reply) = (entry.method.spec.name, entry.mime_type, entry.reply);
    invoke(server, name, Some(params.raw()), cx, extras, out, move |server, result, out| {
        let json = result?;
        let mut object = Object::open(out);
        let contents = object.member("contents");
        // The method's JSON goes out as it came, around MCP's members.
        match reply {
            Reply::Marked("contents") => {
                let parts: Contents =
                    serde_json::from_str(json).map_err(|err| unexpected(name, "resource contents", &err))?;
                written::value(contents, &parts.filled(&uri, mime_type).parts())?;
            }
            Reply::Text if json.starts_with('"') => text_part(contents, &uri, mime_type, |out| {
                out.extend_from_slice(json.as_bytes());
            }),
            _ => text_part(contents, &uri, mime_type.or(Some("application/json")), |out| {
                written::string(out, json);
            }),
        }
        object.uncached(revision);
        object.stamp(server, revision);
        object.close();
        Ok(())
    })
}

/// The contents of a resource that is one text part: `[{uri, mimeType,
/// text}]`, `text` written by `text`.
fn text_part(out: &mut Vec<u8>, uri: &str, mime_type: Option<&str>, text: impl FnOnce(&mut Vec<u8>)) {
    out.push(b'[');
    let mut part = Object::open(out);
    part.string("uri", uri);
    if let Some(mime_type) = mime_type {
        part.string("mimeType", mime_type);
    }
    text(part.member("text"));
    part.close();
    out.push(b']');
}

/// No resource has `uri`: -32002 through 2025-11-25, -32602 after.
fn not_found(revision: Revision, uri: &str) -> ErrorObject {
    let code = if revision.is_modern() { INVALID_PARAMS } else { RESOURCE_NOT_FOUND };
    ErrorObject::new(
        code,
        format!(
            "Resource not found: no resource has the URI `{uri}`; `resources/list` and `resources/templates/list` show the ones there are"
        ),
    )
    .with_data(&serde_json::json!({ "uri": uri }))
}
