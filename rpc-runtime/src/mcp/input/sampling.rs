//! Sampling: a request to the host's model, and its answer.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A request to the host's model ([`Context::sample`](crate::Context::sample)): messages, and
/// how to answer them.
///
/// ```
/// use rpc_runtime::mcp::Sampling;
///
/// let request = Sampling::new(200).system_prompt("You name notes.").user("Title for: eggs, milk");
/// # drop(request);
/// ```
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sampling {
    messages: Vec<Value>,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system_prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    stop_sequences: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model_preferences: Option<Value>,
}

impl Sampling {
    /// No messages yet; the answer has at most `max_tokens` tokens.
    pub fn new(max_tokens: u32) -> Self {
        Sampling {
            messages: Vec::new(),
            max_tokens,
            system_prompt: None,
            temperature: None,
            stop_sequences: Vec::new(),
            model_preferences: None,
        }
    }

    /// Then a text message from the user.
    #[must_use]
    pub fn user(mut self, text: impl Into<String>) -> Self {
        self.messages.push(json!({ "role": "user", "content": { "type": "text", "text": text.into() } }));
        self
    }

    /// Then a text message from the assistant (a previous answer).
    #[must_use]
    pub fn assistant(mut self, text: impl Into<String>) -> Self {
        self.messages.push(json!({ "role": "assistant", "content": { "type": "text", "text": text.into() } }));
        self
    }

    /// The system prompt the host may use.
    #[must_use]
    pub fn system_prompt(self, prompt: impl Into<String>) -> Self {
        Sampling { system_prompt: Some(prompt.into()), ..self }
    }

    /// The sampling temperature.
    #[must_use]
    pub fn temperature(self, temperature: f64) -> Self {
        Sampling { temperature: Some(temperature), ..self }
    }

    /// Where the model should stop.
    #[must_use]
    pub fn stop_sequence(mut self, stop: impl Into<String>) -> Self {
        self.stop_sequences.push(stop.into());
        self
    }

    /// Models to prefer, by name (hints the host may match loosely).
    #[must_use]
    pub fn model_hint(mut self, name: impl Into<String>) -> Self {
        let preferences = self.model_preferences.get_or_insert_with(|| json!({ "hints": [] }));
        if let Some(hints) = preferences["hints"].as_array_mut() {
            hints.push(json!({ "name": name.into() }));
        }
        self
    }
}

/// The host model's answer to a [`Sampling`].
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Sampled {
    /// `assistant`, usually.
    pub role: String,
    /// The answer's content (a text block, usually; see [`Sampled::text`]).
    pub content: Value,
    /// The model that answered.
    pub model: String,
    /// Why it stopped (`endTurn`, `stopSequence`, `maxTokens`, ...).
    #[serde(default)]
    pub stop_reason: Option<String>,
}

impl Sampled {
    /// The answer's text: its text block (the text blocks, joined, when it
    /// has several); `None` when it has none.
    pub fn text(&self) -> Option<String> {
        let blocks = match &self.content {
            Value::Array(blocks) => blocks.iter().collect::<Vec<_>>(),
            block => vec![block],
        };
        let texts: Vec<&str> =
            blocks.iter().filter(|block| block["type"] == "text").filter_map(|block| block["text"].as_str()).collect();
        (!texts.is_empty()).then(|| texts.join(""))
    }
}
