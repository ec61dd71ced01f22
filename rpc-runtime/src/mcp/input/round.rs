//! The rounds of input of a 2026-07-28 call: the answers it came with,
//! what its handler asked that has no answer, and the `requestState` that
//! carries the answers from one round to the next.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use tokio::sync::Notify;

use super::InputError;
use crate::wire::ErrorObject;

/// The input of one 2026-07-28 call: the answers it came with (those of
/// earlier rounds from its `requestState`, this round's from its
/// `inputResponses`), and what the handler asked for that has no answer.
pub(crate) struct Round {
    answers: BTreeMap<String, Value>,
    next: AtomicUsize,
    asked: Mutex<Vec<(String, Value)>>,
    blocked: Notify,
}

/// Most rounds of input one call may take.
const MAX_ROUNDS: usize = 32;

/// The longest `requestState` accepted.
const MAX_STATE: usize = 256 * 1024;

/// How long a `requestState` stays good, in seconds.
const STATE_TTL: u64 = 600;

/// What 2026-07-28 calls that may ask for input carry in their params.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InputParams {
    #[serde(default)]
    pub(super) input_responses: Option<BTreeMap<String, Value>>,
    #[serde(default)]
    pub(super) request_state: Option<String>,
}

/// The state a call hands the client between rounds. It holds only the
/// client's own answers, bound to the call they belong to: nothing the
/// client could not send itself, so it is not signed (MCP asks for
/// integrity protection when the state carries what the server trusts).
#[derive(Serialize, Deserialize)]
struct State {
    /// What it belongs to: method, target (tool name, URI, prompt) and a
    /// digest of the arguments.
    call: String,
    /// Seconds since the Unix epoch after which it is refused.
    expires: u64,
    answers: BTreeMap<String, Value>,
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |since| since.as_secs())
}

/// FNV-1a, 64 bits: a stable digest of a call's arguments (not a
/// security measure: see [`State`]).
fn digest(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3))
}

impl Round {
    /// The round of a call of `method` on `target` with `arguments` (raw
    /// JSON), from what its params carry; -32602 for a `requestState`
    /// that is not this server's, has expired or belongs to another call.
    pub(crate) fn new(call: &str, input: InputParams) -> Result<Round, ErrorObject> {
        let mut answers = BTreeMap::new();
        if let Some(state) = input.request_state {
            let refuse = |reason: &str| {
                ErrorObject::invalid_params(format!("Invalid or expired requestState: {reason}"))
                    .with_data(&json!({ "reason": "invalid_request_state" }))
            };
            if state.len() > MAX_STATE {
                return Err(refuse("too long"));
            }
            let state: State = serde_json::from_str(&state).map_err(|_| refuse("not one this server made"))?;
            if state.call != call {
                return Err(refuse("it belongs to another call (tool, prompt or resource, or arguments)"));
            }
            if state.expires < now() {
                return Err(refuse("it expired; call again without it"));
            }
            answers = state.answers;
        }
        // Answers to what was not asked are ignored, as MCP says; only
        // those of this server's keys are kept.
        for (key, answer) in input.input_responses.unwrap_or_default() {
            if key.starts_with("input-") && answers.len() <= MAX_ROUNDS {
                answers.insert(key, answer);
            }
        }
        Ok(Round { answers, next: AtomicUsize::new(0), asked: Mutex::default(), blocked: Notify::new() })
    }

    /// The call's identity as its state records it.
    pub(crate) fn call_of(method: &str, target: &str, arguments: Option<&RawValue>) -> String {
        format!("{method} {target} {:016x}", digest(arguments.map_or("", RawValue::get)))
    }

    /// The answer to the next question, if the client gave it; else the
    /// question is recorded and the call stops here (the engine ends it
    /// with `input_required`).
    pub(super) async fn ask(&self, method: &str, params: Value) -> Result<Value, InputError> {
        let index = self.next.fetch_add(1, Ordering::Relaxed);
        if index >= MAX_ROUNDS {
            return Err(InputError::Unreachable("the call asked for input too many times"));
        }
        let key = format!("input-{index}");
        if let Some(answer) = self.answers.get(&key) {
            return Ok(answer.clone());
        }
        self.asked
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push((key, json!({ "method": method, "params": params })));
        self.blocked.notify_one();
        std::future::pending().await
    }

    /// Completes once the handler asked for input it does not have.
    pub(crate) async fn blocked(&self) {
        loop {
            if !self.asked.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).is_empty() {
                return;
            }
            self.blocked.notified().await;
        }
    }

    /// The `input_required` result of a call that stopped for input.
    pub(crate) fn input_required(&self, call: String, server_info_meta: &RawValue) -> Map<String, Value> {
        let asked = std::mem::take(&mut *self.asked.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
        let requests: Map<String, Value> = asked.into_iter().collect();
        let state = State { call, expires: now() + STATE_TTL, answers: self.answers.clone() };
        let mut result = Map::new();
        result.insert("resultType".into(), "input_required".into());
        result.insert("inputRequests".into(), requests.into());
        result.insert("requestState".into(), serde_json::to_string(&state).unwrap_or_default().into());
        result.insert("_meta".into(), serde_json::from_str(server_info_meta.get()).unwrap_or_default());
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_is_bound_to_its_call_and_expires() {
        let call = Round::call_of("tools/call", "clear", None);
        let round = Round::new(&call, InputParams::default()).unwrap();
        round.asked.lock().unwrap().push(("input-0".into(), json!({})));
        let result = round.input_required(call.clone(), &RawValue::from_string("{}".into()).unwrap());
        let state = result["requestState"].as_str().unwrap().to_owned();
        let input = |state: &str| InputParams {
            input_responses: Some([("input-0".to_owned(), json!({"action": "decline"}))].into()),
            request_state: Some(state.to_owned()),
        };
        let again = Round::new(&call, input(&state)).unwrap();
        assert_eq!(again.answers["input-0"]["action"], "decline");
        let other = Round::call_of("tools/call", "clear", Some(&RawValue::from_string("{\"x\":1}".into()).unwrap()));
        assert!(Round::new(&other, input(&state)).is_err());
        assert!(Round::new(&call, input("junk")).is_err());
        let expired =
            serde_json::to_string(&State { call: call.clone(), expires: 1, answers: BTreeMap::new() }).unwrap();
        assert!(Round::new(&call, input(&expired)).is_err());
    }

    #[test]
    fn states_and_rounds_are_bounded() {
        let call = Round::call_of("tools/call", "t", None);
        let long = serde_json::to_string(&State {
            call: call.clone(),
            expires: u64::MAX,
            answers: [("input-0".to_owned(), json!("x".repeat(MAX_STATE)))].into(),
        })
        .unwrap();
        let input = InputParams { input_responses: None, request_state: Some(long) };
        assert!(Round::new(&call, input).err().is_some_and(|error| error.message().contains("too long")));

        // Every question answered, up to the bound: the next is refused.
        let answers = (0..MAX_ROUNDS).map(|n| (format!("input-{n}"), json!({"action": "decline"}))).collect();
        let round = Round::new(&call, InputParams { input_responses: Some(answers), request_state: None }).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        runtime.block_on(async {
            for _ in 0..MAX_ROUNDS {
                assert!(round.ask("elicitation/create", json!({})).await.is_ok());
            }
            assert!(matches!(round.ask("elicitation/create", json!({})).await, Err(InputError::Unreachable(_))));
        });
    }
}
