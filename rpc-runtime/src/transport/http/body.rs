//! A `POST`'s body: whether it is JSON (its `Content-Type`), and reading
//! it whole within the body limit and the body timeout.
//!
//! Reading is its own job because it is where a slow or oversized client
//! is stopped, and where the common case (a body that arrived with its
//! headers, in one frame) must cost no timer and no copy.

use std::future::{Future, poll_fn};
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use bytes::{Buf, Bytes};
use http::header::HeaderValue;
use hyper::body::Body;

/// Why a body could not be read whole.
pub(super) enum BodyError {
    /// Longer than the limit.
    TooLarge,
    /// The body failed (the client went away mid-body, say).
    Failed(Box<dyn std::error::Error + Send + Sync>),
    /// Not all there within the body timeout.
    TimedOut,
}

/// Reads `body` whole (at most `max` bytes) within `timeout`. A body
/// usually arrives with its headers, so it is first read without arming
/// a timer; only a body still on its way is read under the timeout.
pub(super) async fn read_body<B>(body: B, max: usize, timeout: Duration) -> Result<Bytes, BodyError>
where
    B: Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut read = pin!(collect_body(body, max));
    if let Poll::Ready(result) = poll_fn(|cx| Poll::Ready(read.as_mut().poll(cx))).await {
        return result;
    }
    tokio::time::timeout(timeout, read).await.unwrap_or(Err(BodyError::TimedOut))
}

/// The data frames of `body`, joined: a body of one frame (the common
/// case) is that frame's bytes, not copied.
async fn collect_body<B>(body: B, max: usize) -> Result<Bytes, BodyError>
where
    B: Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut body = pin!(body);
    let mut single: Option<Bytes> = None;
    let mut joined: Vec<u8> = Vec::new();
    let mut length = 0usize;
    while let Some(frame) = poll_fn(|cx| body.as_mut().poll_frame(cx)).await {
        let frame = frame.map_err(|err| BodyError::Failed(err.into()))?;
        let Ok(mut data) = frame.into_data() else { continue };
        let chunk = data.copy_to_bytes(data.remaining());
        length = length.saturating_add(chunk.len());
        if length > max {
            return Err(BodyError::TooLarge);
        }
        if chunk.is_empty() {
            continue;
        }
        match single.take() {
            None if joined.is_empty() => single = Some(chunk),
            None => joined.extend_from_slice(&chunk),
            Some(first) => {
                joined.reserve(first.len() + chunk.len());
                joined.extend_from_slice(&first);
                joined.extend_from_slice(&chunk);
            }
        }
    }
    Ok(single.unwrap_or_else(|| Bytes::from(joined)))
}

/// `application/json`, with parameters (`; charset=utf-8`) or as a
/// `+json` suffix, in any ASCII case.
pub(super) fn is_json(value: Option<&HeaderValue>) -> bool {
    is_json_str(value.and_then(|value| value.to_str().ok()))
}

/// [`is_json`] of a value already read as text.
fn is_json_str(value: Option<&str>) -> bool {
    let Some(value) = value else {
        return false;
    };
    if value == "application/json" {
        return true;
    }
    let essence = value.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("application/json")
        || (starts_with_ignore_case(essence, "application/") && ends_with_ignore_case(essence, "+json"))
}

fn starts_with_ignore_case(text: &str, prefix: &str) -> bool {
    text.as_bytes().get(..prefix.len()).is_some_and(|start| start.eq_ignore_ascii_case(prefix.as_bytes()))
}

/// Whether `text` ends with `suffix` in any ASCII case (compared as
/// bytes: no lower-cased copy, and no slicing inside a character).
pub(super) fn ends_with_ignore_case(text: &str, suffix: &str) -> bool {
    let text = text.as_bytes();
    text.len() >= suffix.len() && text[text.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_are_read_as_browsers_send_them() {
        let json = |text: &'static str| is_json(Some(&HeaderValue::from_static(text)));
        assert!(json("application/json") && json("Application/JSON; charset=utf-8") && json("application/rpc+json"));
        assert!(!json("text/plain") && !json("application/x-www-form-urlencoded") && !is_json(None));
    }
}
