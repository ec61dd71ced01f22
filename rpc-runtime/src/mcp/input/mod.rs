//! Asking the client for input in the middle of a call: the user, through
//! a form (elicitation, [`Context::elicit`]), or the host's model
//! (sampling, [`Context::sample`]).
//!
//! In the handshake revisions the server sends the client a request
//! (`elicitation/create`, `sampling/createMessage`) while the call runs,
//! on the connection (stdio) or on the call's event stream (Streamable
//! HTTP), and the call goes on with the answer. In 2026-07-28 a call that
//! needs input ends with an `input_required` result listing what it
//! needs; the client asks, then sends the call again with the answers,
//! and the handler runs again from the start: each `elicit` and `sample`
//! it reaches finds its answer, in order. So do the asking before
//! anything that must not run twice.

mod form;
mod round;
mod sampling;

use std::fmt;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

pub use form::{Elicit, ElicitField, Elicitation, FormField, form_schema};
pub(crate) use round::{InputParams, Round};
pub use sampling::{Sampled, Sampling};

use super::outlet::Outlet;
use super::revision::Revision;
use super::session::{Caller, Meta, Session, askable};
use crate::dispatch::context::Context;
use crate::dispatch::params::Params;
use crate::wire::ErrorObject;

/// MCP's "a capability the request needs was not declared" (2026-07-28):
/// the code of [`InputError::Unsupported`] as an error object.
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;

/// The code of the other [`InputError`]s as error objects (the
/// implementation-defined server error range of JSON-RPC).
pub const INPUT_FAILED: i64 = -32050;

/// Why input could not be had from the client.
#[derive(Debug)]
#[non_exhaustive]
pub enum InputError {
    /// The client did not declare the capability (`elicitation`,
    /// `sampling`) for this call, or this is not an MCP call at all.
    Unsupported {
        /// The capability that is missing.
        capability: &'static str,
    },
    /// The protocol revision of the call has no such request
    /// (elicitation came in 2025-06-18).
    Revision {
        /// The capability.
        capability: &'static str,
        /// The call's revision.
        revision: Revision,
    },
    /// The client answered with an error.
    Client(ErrorObject),
    /// The client's answer did not have the expected shape.
    Invalid(String),
    /// The call cannot reach the client any more (cancelled, closed,
    /// answered as one JSON document), or the client has too many
    /// questions pending.
    Unreachable(&'static str),
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::Unsupported { capability } => write!(
                f,
                "the client did not declare the `{capability}` capability, so this tool cannot ask it for input; use a client that supports {capability}"
            ),
            InputError::Revision { capability, revision } => {
                write!(f, "MCP {revision} has no `{capability}`: it came in 2025-06-18")
            }
            InputError::Client(error) => {
                write!(
                    f,
                    "the client answered the request for input with an error: {} ({})",
                    error.message(),
                    error.code()
                )
            }
            InputError::Invalid(reason) => {
                write!(f, "the client's answer to the request for input is invalid: {reason}")
            }
            InputError::Unreachable(reason) => write!(f, "the client cannot be asked for input: {reason}"),
        }
    }
}

impl std::error::Error for InputError {}

impl From<InputError> for ErrorObject {
    /// An error the tool answers with (a tool error the model can read):
    /// -32021 for a capability the client lacks, else -32050.
    fn from(error: InputError) -> Self {
        match &error {
            InputError::Unsupported { capability } => {
                ErrorObject::new(MISSING_REQUIRED_CLIENT_CAPABILITY, error.to_string())
                    .with_data(&json!({ "requiredCapabilities": { *capability: {} } }))
            }
            _ => ErrorObject::new(INPUT_FAILED, error.to_string()),
        }
    }
}

/// What a call that may ask for input knows: its revision, the client's
/// capabilities, and (2026-07-28) the round of input it is in. Put in the
/// call's context only when the client declared it can be asked.
pub(crate) struct InputCall {
    pub(crate) revision: Revision,
    pub(crate) capabilities: Value,
    pub(crate) round: Option<Arc<Round>>,
    /// The session, whose pending requests to the client hold the
    /// answers (Streamable HTTP).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) session: Option<Arc<Session>>,
}

impl InputCall {
    fn can(&self, capability: &str) -> bool {
        self.capabilities.get(capability).is_some_and(|value| !value.is_null())
    }

    /// How the call of `method` on `target` with `arguments` (params
    /// `params`) may ask its client for input: `None` when the client
    /// declared neither elicitation nor sampling (for this request in
    /// 2026-07-28, for its session before), so that calls of clients that
    /// cannot be asked carry nothing more.
    pub(crate) fn of(
        meta: &Meta<'_>,
        caller: &Caller,
        params: &Params<'_>,
        (method, target, arguments): (&str, &str, Option<&RawValue>),
    ) -> Result<Option<(InputCall, Option<String>)>, ErrorObject> {
        let revision = caller.revision;
        if revision.is_modern() {
            // Most clients cannot be asked: tell from the text before
            // reading anything.
            let declared = meta.capabilities.map_or("", RawValue::get);
            if !declared.contains("\"elicitation\"") && !declared.contains("\"sampling\"") {
                return Ok(None);
            }
            let capabilities: Value = serde_json::from_str(declared).unwrap_or_default();
            if !askable(&capabilities) {
                return Ok(None);
            }
            let input: InputParams =
                params.raw().and_then(|raw| serde_json::from_str(raw.get()).ok()).unwrap_or_default();
            let call = Round::call_of(method, target, arguments);
            let round = Arc::new(Round::new(&call, input)?);
            return Ok(Some((InputCall { revision, capabilities, round: Some(round), session: None }, Some(call))));
        }
        let Some(capabilities) = caller.input_capabilities.clone() else { return Ok(None) };
        Ok(Some((InputCall { revision, capabilities, round: None, session: caller.session.clone() }, None)))
    }
}

impl Context {
    /// Asks the user for a `T` through the MCP client (an elicitation):
    /// shows `message` and a form of `T`'s fields, and answers what the
    /// user did. An error when the client did not declare the
    /// `elicitation` capability (turned into a tool error by `?` in a
    /// method returning `Result<_, ErrorObject>`).
    ///
    /// ```
    /// use rpc_runtime::mcp::{Elicit, Elicitation};
    /// use rpc_runtime::{rpc, Context, ErrorObject};
    /// use rpc_runtime::serde::Deserialize;
    ///
    /// #[derive(Deserialize, Elicit)]
    /// #[serde(crate = "rpc_runtime::serde")]
    /// struct Confirm {
    ///     /// Delete them all?
    ///     confirm: bool,
    /// }
    ///
    /// #[rpc]
    /// pub trait Notes {
    ///     /// Deletes every note, once the user confirms.
    ///     async fn clear(&self, cx: Context) -> Result<u64, ErrorObject>;
    /// }
    ///
    /// struct Notebook;
    ///
    /// impl Notes for Notebook {
    ///     async fn clear(&self, cx: Context) -> Result<u64, ErrorObject> {
    ///         match cx.elicit::<Confirm>("Delete every note?").await? {
    ///             Elicitation::Accept(Confirm { confirm: true }) => Ok(3), // ... deleted
    ///             _ => Ok(0),
    ///         }
    ///     }
    /// }
    /// ```
    pub async fn elicit<T: Elicit>(&self, message: impl Into<String>) -> Result<Elicitation<T>, InputError> {
        let params = json!({ "message": message.into(), "requestedSchema": T::requested_schema() });
        let answer = self.ask("elicitation", "elicitation/create", params).await?;
        #[derive(Deserialize)]
        struct ElicitResult {
            action: String,
            #[serde(default)]
            content: Option<Value>,
        }
        let result: ElicitResult =
            serde_json::from_value(answer).map_err(|err| InputError::Invalid(format!("not an ElicitResult: {err}")))?;
        match result.action.as_str() {
            "accept" => {
                let content = result.content.unwrap_or_else(|| Value::Object(Map::new()));
                serde_json::from_value(content)
                    .map(Elicitation::Accept)
                    .map_err(|err| InputError::Invalid(format!("the form's content does not fit the form: {err}")))
            }
            "decline" => Ok(Elicitation::Decline),
            "cancel" => Ok(Elicitation::Cancel),
            other => Err(InputError::Invalid(format!("unknown action `{other}` (MCP's are accept, decline, cancel)"))),
        }
    }

    /// Asks the host's model (a `sampling/createMessage`), and answers its
    /// reply. An error when the client did not declare the `sampling`
    /// capability. (Deprecated by MCP 2026-07-28, where it still works.)
    pub async fn sample(&self, request: Sampling) -> Result<Sampled, InputError> {
        let params = serde_json::to_value(&request).map_err(|err| InputError::Invalid(err.to_string()))?;
        let answer = self.ask("sampling", "sampling/createMessage", params).await?;
        serde_json::from_value(answer).map_err(|err| InputError::Invalid(format!("not a CreateMessageResult: {err}")))
    }

    /// Asks the client `method` with `params`, which needs `capability`.
    async fn ask(&self, capability: &'static str, method: &'static str, params: Value) -> Result<Value, InputError> {
        let Some(call) = self.extension::<InputCall>() else { return Err(InputError::Unsupported { capability }) };
        if !call.can(capability) {
            return Err(InputError::Unsupported { capability });
        }
        if capability == "elicitation" && call.revision < Revision::V2025_06_18 {
            return Err(InputError::Revision { capability, revision: call.revision });
        }
        if let Some(round) = &call.round {
            return round.ask(method, params).await;
        }
        let params = serde_json::value::to_raw_value(&params).map_err(|err| InputError::Invalid(err.to_string()))?;
        match Outlet::of_request(self) {
            Some(Outlet::Peer(peer)) => {
                let answer = tokio::select! {
                    answer = peer.call_raw(method, Some(&params), None) => answer,
                    () = self.cancelled() => return Err(InputError::Unreachable("the call was cancelled")),
                };
                match answer {
                    Ok(result) => {
                        serde_json::from_str(result.get()).map_err(|err| InputError::Invalid(err.to_string()))
                    }
                    Err(crate::peer::client::ClientError::Server(error)) => Err(InputError::Client(error)),
                    Err(_) => Err(InputError::Unreachable("the connection is gone")),
                }
            }
            #[cfg(feature = "http")]
            Some(Outlet::Stream(stream)) => {
                let Some(session) = &call.session else {
                    return Err(InputError::Unreachable("the call belongs to no session"));
                };
                let (id, answer) = session.outgoing().ok_or(InputError::Unreachable(
                    "the client has too many requests for input unanswered in this session",
                ))?;
                let request = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
                let sent = serde_json::to_vec(&request).is_ok_and(|bytes| stream.try_send(bytes).is_ok());
                if !sent {
                    session.forget(id);
                    return Err(InputError::Unreachable("the call's event stream is closed or full"));
                }
                let answer = tokio::select! {
                    answer = answer => answer,
                    () = self.cancelled() => {
                        session.forget(id);
                        return Err(InputError::Unreachable("the call was cancelled"));
                    }
                };
                match answer {
                    Ok(Ok(result)) => {
                        serde_json::from_str(result.get()).map_err(|err| InputError::Invalid(err.to_string()))
                    }
                    Ok(Err(error)) => Err(InputError::Client(error)),
                    Err(_) => Err(InputError::Unreachable("the session ended")),
                }
            }
            _ => Err(InputError::Unreachable(
                "the call's answer is not an event stream (over Streamable HTTP, a client that declares the capability gets one)",
            )),
        }
    }
}
