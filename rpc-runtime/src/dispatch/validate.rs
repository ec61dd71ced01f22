//! Validating a request: what the specification requires of a request
//! object, and the -32700 / -32600 answer when a message falls short.

use std::borrow::Cow;

use serde::de::IgnoredAny;
use serde_json::error::Category;
use serde_json::value::RawValue;

use crate::dispatch::dialect::Dialect;
use crate::dispatch::params::errors::push_without_position;
use crate::wire::error::ErrorObject;
use crate::wire::message::{Envelope, IdOnly, MethodMember, Version, VersionOnly, is_valid_id, method_name};
use crate::wire::response::{NULL_ID, write_error};

/// A request that passed every check: what its call needs.
pub(crate) struct Call<'a> {
    /// The id as written (raw JSON), `None` for a notification.
    pub(crate) id: Option<&'a str>,
    /// The method's name, unescaped.
    pub(crate) method: Cow<'a, str>,
    /// The params, absent or structured (an array or an object).
    pub(crate) params: Option<&'a RawValue>,
}

/// Checks `request` as JSON-RPC 2.0 requires (and its id as `dialect`
/// does, if any): the call it makes, or `None` when it is invalid and
/// was answered into `out`.
///
/// The checks come in the order that decides which of several faults is
/// reported: an id that cannot be echoed, the dialect's id rule, a
/// missing `method`, the version, a `method` that is not a string, and
/// params that are not structured.
#[inline(always)]
pub(crate) fn validate<'a>(
    request: &Envelope<'a>,
    dialect: Option<&dyn Dialect>,
    out: &mut Vec<u8>,
) -> Option<Call<'a>> {
    // An id of the wrong type cannot be echoed: the answer carries null.
    let id = match request.id {
        None => None,
        Some(raw) if is_valid_id(raw) => Some(raw.get()),
        Some(_) => return invalid(out, None, Some(Why::IdType)),
    };
    if let (Some(dialect), Some(raw), Some(echo)) = (dialect, request.id, id)
        && let Err(error) = dialect.check_id(raw)
    {
        write_error(out, echo, &error);
        return None;
    }
    let Some(method) = request.method else {
        // Neither `jsonrpc` nor `method` (the specification's
        // `{"foo": "boo"}`): nothing of a request, answered bare.
        return invalid(out, id, request.jsonrpc.map(|_| Why::NoMethod));
    };
    if request.jsonrpc != Some(Version(true)) {
        return invalid(out, id, Some(Why::Version(request.text)));
    }
    // The specification's own examples answer a `method` that is not a
    // string and `params` that are not structured with the bare error
    // object: so do we, byte for byte. Every other cause is in `data`.
    let method = match method {
        MethodMember::Plain(name) => Cow::Borrowed(name),
        escaped => match method_name(escaped, request.text) {
            Some(name) => name,
            None => return invalid(out, id, None),
        },
    };
    if let Some(params) = request.params
        && !matches!(params.get().as_bytes().first(), Some(b'[' | b'{'))
    {
        return invalid(out, id, None);
    }
    Some(Call { id, method, params: request.params })
}

/// Answers an invalid request with -32600 (`why` in its `data`, if any).
#[cold]
#[inline(never)]
fn invalid<T>(out: &mut Vec<u8>, id: Option<&str>, why: Option<Why<'_>>) -> Option<T> {
    let error = match why {
        Some(why) => why.error(),
        None => ErrorObject::invalid_request(),
    };
    write_error(out, id.unwrap_or(NULL_ID), &error);
    None
}

/// Why a request object is invalid, said in the -32600 error's `data`.
enum Why<'a> {
    /// `"id"` is not a string, a number or null.
    IdType,
    /// `"jsonrpc"` is missing (JSON-RPC 1.0) or not `"2.0"`, in the request
    /// object that is this text.
    Version(&'a str),
    /// No `"method"` member.
    NoMethod,
}

impl Why<'_> {
    #[cold]
    fn error(self) -> ErrorObject {
        let reason = match self {
            Why::IdType => "\"id\" must be a string, a number or null".to_owned(),
            Why::Version(text) => match serde_json::from_str::<VersionOnly<'_>>(text) {
                Ok(VersionOnly { jsonrpc: Some(raw) }) => {
                    format!("\"jsonrpc\" must be \"2.0\", got {}", truncated(raw.get()))
                }
                _ => "\"jsonrpc\" must be \"2.0\"; it is missing (JSON-RPC 1.0 requests are not supported)".to_owned(),
            },
            Why::NoMethod => "\"method\" is missing".to_owned(),
        };
        ErrorObject::invalid_request().with_data(&reason)
    }
}

/// At most 64 bytes of `text` (on a char boundary), for a reason.
fn truncated(text: &str) -> &str {
    let mut end = text.len().min(64);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// -32600 for an entry that did not decode as a request object: bare for
/// a non-object (as the specification's examples answer), else with the
/// decoder's reason in `data`.
#[cold]
pub(crate) fn not_a_request(text: &str, err: &serde_json::Error) -> ErrorObject {
    if !text.trim_start().starts_with('{') {
        return ErrorObject::invalid_request();
    }
    let mut reason = String::from("not a request object: ");
    push_without_position(&mut reason, err);
    ErrorObject::invalid_request().with_data(&reason)
}

/// Decides between -32700 and -32600 for a message that did not decode as
/// a request object, and recovers its id when it can be read.
#[cold]
pub(crate) fn classify_top_level<'a>(text: &'a str, err: &serde_json::Error) -> (&'a str, ErrorObject) {
    let syntax = match err.classify() {
        Category::Eof | Category::Io => true,
        // A type error may come before a syntax error further on; and a
        // string no Rust string can hold (an escaped lone surrogate, which
        // JSON's grammar allows) is a syntax error to serde only where it is
        // read as a string: in `method` or `jsonrpc`, it is an invalid request.
        Category::Data | Category::Syntax => serde_json::from_str::<IgnoredAny>(text).is_err(),
    };
    if syntax {
        tracing::debug!(error = %err, "message is not valid JSON");
        (NULL_ID, ErrorObject::parse_error())
    } else {
        tracing::debug!(error = %err, "message is not a request object");
        (id_of_broken(text), not_a_request(text, err))
    }
}

/// The id of a request object that failed to decode, or `null`.
pub(crate) fn id_of_broken(text: &str) -> &str {
    match serde_json::from_str::<IdOnly<'_>>(text) {
        Ok(IdOnly { id: Some(id) }) if is_valid_id(id) => id.get(),
        _ => NULL_ID,
    }
}
