//! Prompts: methods marked `#[rpc(mcp(prompt))]`, whose params are the
//! prompt's arguments (`prompts/list`) and whose result becomes the
//! prompt's messages (`prompts/get`).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::arguments::{Extras, Reply, StringParam, invoke, params_from_strings, string_params, unexpected};
use super::revision::Revision;
use super::session::Meta;
use super::tools::{group, page, visible};
use super::written::{self, Object};
use super::{Answered, ToolServer, list_request, read};
use crate::catalog::{Catalog, McpKind, MethodInfo};
use crate::dispatch::context::Context;
use crate::dispatch::params::Params;
use crate::dispatch::permissions::Permissions;
use crate::wire::{ErrorObject, INVALID_PARAMS};

/// One prompt.
pub(crate) struct Prompt {
    method: &'static MethodInfo,
    pub(crate) params: Vec<StringParam>,
    reply: Reply,
    /// The doc comment's summary as a JSON string: the description of
    /// messages that have none of their own.
    summary: Option<Box<str>>,
}

impl Prompt {
    /// `#[rpc(mcp(name = ".."))]`, else the method's name.
    pub(crate) fn name(&self) -> &'static str {
        self.method.tool.name.unwrap_or(self.method.spec.name)
    }

    /// The prompt as `prompts/list` shows it under `revision`.
    fn describe(&self, revision: Revision) -> Box<RawValue> {
        let mut out = Map::new();
        super::describe(&mut out, self.method, revision);
        let arguments: Vec<Value> = self
            .params
            .iter()
            .map(|param| {
                let mut argument = Map::new();
                argument.insert("name".into(), param.name.into());
                if let Some(description) = param.description {
                    argument.insert("description".into(), description.into());
                }
                argument.insert("required".into(), (!param.optional).into());
                Value::Object(argument)
            })
            .collect();
        out.insert("arguments".into(), arguments.into());
        serde_json::value::to_raw_value(&out).unwrap_or_else(|err| unreachable!("JSON values serialize: {err}"))
    }
}

/// Every prompt of a router.
#[derive(Default)]
pub(crate) struct Prompts {
    prompts: Vec<Prompt>,
    by_name: HashMap<&'static str, usize>,
    listings: [OnceLock<Vec<Box<RawValue>>>; 4],
}

impl Prompts {
    pub(crate) fn new(catalog: &Catalog, served: impl Fn(&str) -> bool) -> Prompts {
        let mut prompts = Prompts::default();
        for method in super::offered(catalog, &served) {
            if method.tool.kind != McpKind::Prompt {
                continue;
            }
            let summary = method.summary.map(|summary| {
                let mut json = Vec::new();
                written::string(&mut json, summary);
                String::from_utf8(json).unwrap_or_default().into_boxed_str()
            });
            let prompt = Prompt { method, params: string_params(method), reply: Reply::of(method), summary };
            let name = prompt.name();
            if prompts.by_name.contains_key(name) {
                tracing::warn!(
                    prompt = name,
                    method = method.spec.name,
                    "not offered as an MCP prompt: another method has this prompt name; give one `#[rpc(mcp(name = \"...\"))]`"
                );
                continue;
            }
            prompts.by_name.insert(name, prompts.prompts.len());
            prompts.prompts.push(prompt);
        }
        prompts
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.prompts.is_empty()
    }

    /// The prompt called `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&Prompt> {
        self.by_name.get(name).map(|&index| &self.prompts[index])
    }
}

/// `prompts/list`: one page of prompts.
pub(crate) fn list(server: &Arc<ToolServer>, params: &Params<'_>, cx: &Context, out: &mut Vec<u8>) -> Answered {
    let (cursor, revision) = list_request(params, cx, "prompts/list")?;
    let prompts = &server.prompts;
    let listing = prompts.listings[group(revision)]
        .get_or_init(|| prompts.prompts.iter().map(|prompt| prompt.describe(revision)).collect());
    let requires = prompts.prompts.iter().map(|prompt| prompt.method.spec.requires.as_ref());
    let listing = visible(listing, requires, Permissions::of(cx));
    let (items, next) = page(&listing, cursor.as_deref(), server.page_size, "prompts")?;
    written::list_page(out, server, revision, "prompts", items, next.as_deref());
    Ok(None)
}

#[derive(Deserialize)]
struct GetParams<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "_meta")]
    meta: Option<&'a RawValue>,
}

/// `prompts/get`: the prompt's method, given its arguments; the answer is
/// written into `out`.
pub(crate) fn get(server: &Arc<ToolServer>, params: &Params<'_>, cx: &Context, out: &mut Vec<u8>) -> Answered {
    let request: GetParams<'_> = read(params, "prompts/get")?;
    let meta = Meta::read(request.meta);
    let caller = meta.caller(cx)?;
    let revision = caller.revision;
    let Some(name) = request.name else {
        return Err(ErrorObject::new(INVALID_PARAMS, "Invalid params: `prompts/get` needs the prompt's `name`"));
    };
    let Some(index) = server.prompts.by_name.get(&*name).copied() else {
        return Err(ErrorObject::new(
            INVALID_PARAMS,
            format!("Invalid params: unknown prompt `{name}`; `prompts/list` shows the ones there are"),
        ));
    };
    let prompt = &server.prompts.prompts[index];
    #[cfg(feature = "otel")]
    super::name_span("prompts/get", &name);
    let arguments = match request.arguments.filter(|raw| raw.get() != "null") {
        Some(raw) => serde_json::from_str::<Arguments<'_>>(raw.get()).map_err(|_| {
            ErrorObject::new(
                INVALID_PARAMS,
                "Invalid params: `arguments` of `prompts/get` must be an object of strings",
            )
        })?,
        None => Arguments(Vec::new()),
    };
    let mut values = arguments.0;
    if let Some((argument, kind)) = values.iter().find_map(|(name, value)| value.other().map(|kind| (name, kind))) {
        return Err(not_a_string(argument, kind));
    }
    values.retain(|(_, value)| !matches!(value, ArgumentValue::Null));
    let missing: Vec<&str> = prompt
        .params
        .iter()
        .filter(|param| !param.optional && !values.iter().any(|(name, _)| name == param.name))
        .map(|param| param.name)
        .collect();
    if !missing.is_empty() {
        return Err(ErrorObject::new(
            INVALID_PARAMS,
            format!("Invalid params: prompt `{name}` needs the argument(s): {}", missing.join(", ")),
        ));
    }
    let extras = Extras::of(&meta, &caller, params, ("prompts/get", &name, request.arguments))?;
    let params = params_from_strings(&prompt.params, &values);
    let (method, reply) = (prompt.method.spec.name, prompt.reply);
    invoke(server, method, Some(params.raw()), cx, extras, out, move |server, result, out| {
        let json = result?;
        let summary = server.prompts.prompts[index].summary.as_deref();
        let mut object = Object::open(out);
        // The method's JSON goes out as it came, around MCP's members.
        match reply {
            Reply::Marked("prompt") => messages(&mut object, json, summary, method)?,
            Reply::Text if json.starts_with('"') => {
                if let Some(summary) = summary {
                    object.json("description", summary);
                }
                let messages = object.member("messages");
                messages.push(b'[');
                written::user_text(messages, |out| out.extend_from_slice(json.as_bytes()));
                messages.push(b']');
            }
            _ => {
                if let Some(summary) = summary {
                    object.json("description", summary);
                }
                let messages = object.member("messages");
                messages.push(b'[');
                written::user_text(messages, |out| written::string(out, json));
                messages.push(b']');
            }
        }
        object.stamp(server, revision);
        object.close();
        Ok(())
    })
}

/// The members of a `GetPromptResult` from the JSON of a [`PromptMessages`]
/// (`{"description": .., "messages": [..]}`, the description left out when
/// there is none): its members as they are, the method's doc comment
/// (`summary`, as a JSON string) for a description it lacks.
///
/// [`PromptMessages`]: super::content::PromptMessages
fn messages(object: &mut Object<'_>, json: &str, summary: Option<&str>, method: &str) -> Result<(), ErrorObject> {
    // How `PromptMessages` writes itself: members in that order, nothing
    // after the messages. Anything else is read, to be sure.
    let members =
        json.strip_prefix('{').and_then(|rest| rest.strip_suffix('}')).filter(|members| members.ends_with(']'));
    match members {
        Some(members) if members.starts_with(r#""description":"#) => object.members(members),
        Some(members) if members.starts_with(r#""messages":"#) => {
            if let Some(summary) = summary {
                object.json("description", summary);
            }
            object.members(members);
        }
        _ => {
            #[derive(Deserialize)]
            struct Written<'a> {
                #[serde(borrow, default)]
                description: Option<&'a RawValue>,
                #[serde(borrow)]
                messages: &'a RawValue,
            }
            let written: Written<'_> =
                serde_json::from_str(json).map_err(|err| unexpected(method, "prompt messages", &err))?;
            match (written.description, summary) {
                (Some(description), _) => object.json("description", description.get()),
                (None, Some(summary)) => object.json("description", summary),
                (None, None) => {}
            }
            object.json("messages", written.messages.get());
        }
    }
    Ok(())
}

/// The `arguments` of `prompts/get` as written: each name and value
/// (borrowed unless escaped), in order.
struct Arguments<'a>(Vec<(Cow<'a, str>, ArgumentValue<'a>)>);

/// The value of a prompt argument: a string, as MCP wants, or `null`
/// (left out), or what else it is (for the error).
enum ArgumentValue<'a> {
    Text(Cow<'a, str>),
    Null,
    Other(&'static str),
}

impl ArgumentValue<'_> {
    /// What kind of value it is, if not a string or `null`.
    fn other(&self) -> Option<&'static str> {
        match self {
            ArgumentValue::Other(kind) => Some(kind),
            _ => None,
        }
    }
}

impl AsRef<str> for ArgumentValue<'_> {
    fn as_ref(&self) -> &str {
        match self {
            ArgumentValue::Text(text) => text,
            ArgumentValue::Null | ArgumentValue::Other(_) => "",
        }
    }
}

impl<'de> Deserialize<'de> for ArgumentValue<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::{IgnoredAny, MapAccess, SeqAccess};
        struct Any;
        impl<'de> serde::de::Visitor<'de> for Any {
            type Value = ArgumentValue<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(ArgumentValue::Text(Cow::Borrowed(text)))
            }
            fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
                Ok(ArgumentValue::Text(Cow::Owned(text.to_owned())))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(ArgumentValue::Null)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(ArgumentValue::Other("a boolean"))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(ArgumentValue::Other("a number"))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(ArgumentValue::Other("a number"))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(ArgumentValue::Other("a number"))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(ArgumentValue::Other("an array"))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(ArgumentValue::Other("an object"))
            }
        }
        deserializer.deserialize_any(Any)
    }
}

impl<'de> Deserialize<'de> for Arguments<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> serde::de::Visitor<'de> for Entries {
            type Value = Arguments<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of arguments")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(4).min(16));
                while let Some(Name(name)) = map.next_key()? {
                    entries.push((name, map.next_value()?));
                }
                Ok(Arguments(entries))
            }
        }
        deserializer.deserialize_map(Entries)
    }
}

/// A name, borrowed from the request unless it has escapes.
struct Name<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Name<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Text;
        impl<'de> serde::de::Visitor<'de> for Text {
            type Value = Name<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a name")
            }
            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(Name(Cow::Borrowed(text)))
            }
            fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
                Ok(Name(Cow::Owned(text.to_owned())))
            }
        }
        deserializer.deserialize_str(Text)
    }
}

/// A prompt argument that is not a string.
fn not_a_string(argument: &str, kind: &str) -> ErrorObject {
    ErrorObject::new(
        INVALID_PARAMS,
        format!(
            "Invalid params: prompt argument `{argument}` must be a string (MCP prompt arguments are strings), got {kind}"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::{Arguments, messages};
    use crate::mcp::content::PromptMessages;
    use crate::mcp::written::Object;
    use std::borrow::Cow;

    /// The result members made from `prompt`'s JSON as its method wrote it.
    fn members(json: &str, summary: Option<&str>) -> serde_json::Value {
        let mut out = Vec::new();
        let mut object = Object::open(&mut out);
        messages(&mut object, json, summary, "summarize").unwrap();
        object.close();
        serde_json::from_slice(&out).unwrap()
    }

    #[test]
    fn prompt_messages_go_out_as_written_with_the_doc_comment_for_a_missing_description() {
        let plain = serde_json::to_string(&PromptMessages::new().user("a \"quoted\" note")).unwrap();
        let described = serde_json::to_string(&PromptMessages::new().description("Own").user("x")).unwrap();

        let answer = members(&plain, Some(r#""From the doc comment""#));
        assert_eq!(answer["description"], "From the doc comment");
        assert_eq!(answer["messages"][0]["content"]["text"], "a \"quoted\" note");
        assert!(members(&plain, None).get("description").is_none());
        assert_eq!(members(&described, Some(r#""From the doc comment""#))["description"], "Own");

        // Another shape with the same meaning is read, not copied.
        let reordered = r#"{"messages":[{"role":"user","content":{"type":"text","text":"x"}}],"description":"Late"}"#;
        let answer = members(reordered, Some(r#""From the doc comment""#));
        assert_eq!(answer["description"], "Late");
        assert_eq!(answer.as_object().unwrap().len(), 2);
        let mut out = Vec::new();
        let mut object = Object::open(&mut out);
        assert!(messages(&mut object, r#"{"text":"no messages"}"#, None, "summarize").is_err());
    }

    #[test]
    fn arguments_keep_their_order_and_borrow_names_without_escapes() {
        let arguments: Arguments<'_> =
            serde_json::from_str(r#"{"z": "1", "a\u0062": null, "c": 2, "d": [1, {"e": "f"}], "g": {"h": true}}"#)
                .unwrap();
        let names: Vec<&str> = arguments.0.iter().map(|(name, _)| name.as_ref()).collect();
        assert_eq!(names, ["z", "ab", "c", "d", "g"]);
        assert_eq!((arguments.0[3].1.other(), arguments.0[4].1.other()), (Some("an array"), Some("an object")));
        assert!(matches!(arguments.0[0].0, Cow::Borrowed(_)) && matches!(arguments.0[1].0, Cow::Owned(_)));
        assert_eq!(arguments.0[0].1.as_ref(), "1");
        assert!(matches!(arguments.0[1].1, super::ArgumentValue::Null));
        assert_eq!(arguments.0[2].1.other(), Some("a number"));
        assert!(serde_json::from_str::<Arguments<'_>>("[1]").is_err());
    }
}
