//! Progress notifications: a tool that runs long tells the caller how far
//! it got, when the caller asked for it with a `progressToken`.

use std::sync::Mutex;

use serde::Serialize;
use serde_json::value::RawValue;

use super::outlet::notify_request;
use crate::dispatch::context::Context;

/// The method of MCP's progress notification.
const PROGRESS_METHOD: &str = "notifications/progress";

/// The progress token of the tool call a context belongs to, and the last
/// progress sent (each must be larger than the one before).
pub(crate) struct ProgressToken {
    token: Box<RawValue>,
    last: Mutex<Option<f64>>,
}

impl ProgressToken {
    pub(crate) fn new(token: &RawValue) -> Self {
        ProgressToken { token: token.to_owned(), last: Mutex::new(None) }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ProgressParams<'a> {
    progress_token: &'a RawValue,
    progress: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    total: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
}

impl Context {
    /// Tells the caller of an MCP tool how far it got: `progress` so far,
    /// out of `total` if known, with an optional human-readable `message`
    /// (a `notifications/progress` for the `progressToken` the caller sent).
    ///
    /// Returns whether a notification was sent: not when the caller gave
    /// no progress token (or the request is not an MCP tool call), when
    /// `progress` is not larger than the last one reported (MCP wants it to
    /// grow) or not a finite number, or when the connection is gone (over
    /// Streamable HTTP: the response stream is closed, or a backlog of
    /// notifications the client has not read is full).
    ///
    /// ```no_run
    /// use rpc_runtime::{rpc, Context};
    ///
    /// #[rpc]
    /// pub trait Indexer {
    ///     /// Indexes every file.
    ///     async fn reindex(&self, cx: Context) -> u64;
    /// }
    ///
    /// # struct Files(Vec<String>);
    /// impl Indexer for Files {
    ///     async fn reindex(&self, cx: Context) -> u64 {
    ///         let total = self.0.len() as f64;
    ///         for (done, _file) in self.0.iter().enumerate() {
    ///             // ... index the file ...
    ///             cx.report_progress(done as f64 + 1.0, Some(total), None).await;
    ///         }
    ///         self.0.len() as u64
    ///     }
    /// }
    /// ```
    pub async fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        let Some(state) = self.extension::<ProgressToken>() else { return false };
        if !progress.is_finite() || total.is_some_and(|total| !total.is_finite()) {
            return false;
        }
        {
            let mut last = state.last.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            if last.is_some_and(|last| progress <= last) {
                return false;
            }
            *last = Some(progress);
        }
        let params = ProgressParams { progress_token: &state.token, progress, total, message };
        let Ok(params) = serde_json::value::to_raw_value(&params) else { return false };
        // Over Streamable HTTP the notification goes before the response on
        // the request's stream, and is dropped when the client does not
        // keep up (progress is advisory; the call is not held).
        notify_request(self, PROGRESS_METHOD, &params).await
    }
}
