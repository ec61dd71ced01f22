//! `Content-Length` framing (LSP and DAP base protocol): a header block
//! whose `Content-Length` gives the body's size in bytes. Reading finds
//! that header among others, reports an oversized body before it has
//! streamed past, and resynchronises on the next header after a
//! malformed one.

use std::io;

use tokio::io::AsyncRead;

use super::{FrameReader, Line, RawFrame, trim_ascii};

/// Longest accepted header line in `Content-Length` framing.
const MAX_HEADER_LINE: usize = 8 * 1024;

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// The next `Content-Length` frame: a header block, then its body
    /// (skipped when over the limit, reported before it has streamed past).
    pub(super) async fn next_header_frame(&mut self) -> io::Result<Option<RawFrame>> {
        if self.skip_pending > 0 {
            let length = std::mem::take(&mut self.skip_pending);
            if !self.skip(length).await? {
                crate::log::warn_throttled!(length, "stream ended inside an oversized message body");
                return Ok(None);
            }
        }
        let mut length: Option<Result<usize, String>> = None;
        let mut seen_header = false;
        let mut problem: Option<String> = None;
        loop {
            let (start, end) = match self.next_line(MAX_HEADER_LINE).await? {
                Line::Complete { start, end } => (start, end),
                Line::TooLong { size } => {
                    problem.get_or_insert(format!("header line of {size} bytes exceeds {MAX_HEADER_LINE}"));
                    seen_header = true;
                    continue;
                }
                Line::Eof { rest } => {
                    if seen_header || rest.is_some_and(|(s, e)| !trim_ascii(&self.buf[s..e]).is_empty()) {
                        crate::log::warn_throttled!("stream ended inside a message header");
                    }
                    return Ok(None);
                }
            };
            let line = trim_ascii(&self.buf[start..end]);
            if line.is_empty() {
                if seen_header {
                    break;
                }
                continue; // stray blank lines between messages
            }
            seen_header = true;
            match parse_header(line) {
                Header::ContentLength(value) => match &length {
                    None => {
                        // Junk before the first Content-Length (typically the
                        // rest of a frame whose length was unreadable, already
                        // reported): the frame starts here.
                        if let Some(junk) = problem.take() {
                            crate::log::warn_throttled!(reason = %junk, "skipped malformed input before a Content-Length header");
                        }
                        length = Some(value);
                    }
                    Some(first) if *first == value => {}
                    Some(_) => {
                        let reason = "conflicting Content-Length headers".to_owned();
                        problem.get_or_insert(reason.clone());
                        length = Some(Err(reason));
                    }
                },
                Header::Other => {}
                Header::Invalid(reason) => {
                    problem.get_or_insert(reason);
                }
            }
        }
        let length = match (problem, length) {
            (Some(reason), Some(Ok(length))) => {
                // A bad header line after a readable length: the body's
                // extent is known, so skip it rather than read it as headers.
                self.skip(length).await?;
                return Ok(Some(malformed(reason)));
            }
            (Some(reason), _) | (None, Some(Err(reason))) => return Ok(Some(malformed(reason))),
            (None, None) => return Ok(Some(malformed("header block without Content-Length".to_owned()))),
            (None, Some(Ok(length))) => length,
        };
        if length > self.max_message_size {
            self.skip_pending = length;
            return Ok(Some(RawFrame::TooLarge(Some(length))));
        }
        match self.take(length).await? {
            Some(body) => Ok(Some(RawFrame::Message(body))),
            None => {
                crate::log::warn_throttled!(length, "stream ended inside a message body");
                Ok(None)
            }
        }
    }
}

/// What one header line says.
enum Header {
    ContentLength(Result<usize, String>),
    Other,
    Invalid(String),
}

fn parse_header(line: &[u8]) -> Header {
    const NAME: &[u8] = b"content-length:";
    if let Some(at) = content_length_at(line, NAME) {
        let value = String::from_utf8_lossy(trim_ascii(&line[at + NAME.len()..]));
        return Header::ContentLength(
            parse_length(&value)
                .ok_or_else(|| format!("invalid Content-Length value `{value}`: expected a byte count")),
        );
    }
    match line.iter().position(|&b| b == b':') {
        Some(_) => Header::Other,
        None => Header::Invalid(format!(
            "malformed header line `{}`: expected `Name: value`",
            String::from_utf8_lossy(&line[..line.len().min(80)])
        )),
    }
}

/// Where a `Content-Length:` header starts in `line`, if it has one. Only
/// a header whose whole name is `Content-Length` (any case) counts:
/// `X-Original-Content-Length: 5` and `X-Note: content-length: 9` are
/// other headers. After a body that was not followed by a newline (or a
/// bad length earlier), the next header can start mid-line
/// (`{"id":1}Content-Length: 2`): it counts when what precedes it is not a
/// header, so that the stream resynchronises on it.
fn content_length_at(line: &[u8], name: &[u8]) -> Option<usize> {
    // RFC 9110 token characters: what a header name is made of.
    let token = |b: &u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(b);
    let start = line.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(line.len());
    let mut from = start;
    while let Some(offset) = find_ascii_case_insensitive(&line[from..], name) {
        let at = from + offset;
        let prefix = &line[start..at];
        let junk = match prefix.iter().position(|b| !token(b)) {
            // All name characters: the end of a longer name.
            None => prefix.is_empty(),
            // Junk, unless it is `Name: ...` (inside another header's
            // value) or the name goes on into ours.
            Some(end) => {
                let in_value = end > 0 && prefix[end] == b':';
                let name_goes_on = token(&line[at - 1]);
                !in_value && !name_goes_on
            }
        };
        if junk {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// A byte count: ASCII digits only (`usize::from_str` would also take a
/// leading `+`, which no peer sends and a strict one refuses).
fn parse_length(value: &str) -> Option<usize> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    value.parse().ok()
}

fn find_ascii_case_insensitive(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window.eq_ignore_ascii_case(needle))
}

#[cold]
fn malformed(reason: String) -> RawFrame {
    crate::log::warn_throttled!(%reason, "malformed message header");
    RawFrame::Malformed(reason)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{frames, msg};
    use crate::wire::framing::{Frame, FrameReader, Framing};

    #[tokio::test]
    async fn headers_are_case_insensitive_and_others_ignored() {
        let input = b"content-length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}CONTENT-LENGTH:3\r\n\r\n[1]";
        let got = frames(Framing::ContentLength, input, 100).await;
        assert_eq!(got, vec![msg("{}"), msg("[1]")]);
    }

    #[tokio::test]
    async fn length_counts_bytes_not_chars() {
        let body = "{\"s\":\"é€😀\"}";
        let input = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        let got = frames(Framing::ContentLength, input.as_bytes(), 100).await;
        assert_eq!(got, vec![msg(body)]);
    }

    #[tokio::test]
    async fn only_a_header_named_content_length_gives_the_length() {
        // Only the header named `Content-Length` gives the length: taking
        // any header that contains `content-length:` would refuse this
        // valid frame and lose its request.
        let input = b"X-Original-Content-Length: 5\r\nContent-Length: 2\r\nX-Note: content-length: 9\r\n\r\n{}";
        let got = frames(Framing::ContentLength, input, 100).await;
        assert_eq!(got, vec![msg("{}")]);
        let got =
            frames(Framing::ContentLength, b"X-Content-Length: 2\r\n\r\n{}Content-Length: 2\r\n\r\n[]", 100).await;
        assert!(matches!(&got[0], Frame::Malformed(reason) if reason.contains("without Content-Length")), "{got:?}");
        assert_eq!(got[1..], [msg("[]")]);
    }

    #[tokio::test]
    async fn a_bad_header_is_reported_and_the_stream_resynchronises() {
        let input = b"Content-Length: abc\r\n\r\n{}Content-Length: 2\r\n\r\n{}";
        let got = frames(Framing::ContentLength, input, 100).await;
        assert!(matches!(&got[0], Frame::Malformed(reason) if reason.contains("abc")), "{got:?}");
        assert_eq!(got[1], msg("{}"));
        let got = frames(Framing::ContentLength, b"garbage\r\n\r\nContent-Length: 2\r\n\r\n{}", 100).await;
        assert!(matches!(&got[0], Frame::Malformed(_)));
        assert_eq!(got[1], msg("{}"));
    }

    #[tokio::test]
    async fn a_bad_header_line_after_a_valid_length_skips_that_body() {
        let body = "{\n\"a\": [1,\n2]\n}";
        let input = format!("Content-Length: {}\r\nbogus\r\n\r\n{body}Content-Length: 2\r\n\r\n{{}}", body.len());
        let got = frames(Framing::ContentLength, input.as_bytes(), 100).await;
        assert!(matches!(&got[0], Frame::Malformed(reason) if reason.contains("bogus")), "{got:?}");
        assert_eq!(got[1..], [msg("{}")]);
    }

    #[tokio::test]
    async fn junk_before_a_content_length_header_does_not_swallow_that_frame() {
        // After an unreadable length, the body (with a line that is not a
        // header) is junk; the header that follows it starts a good frame.
        let input = b"Content-Length: x\r\n\r\n[1,\n2]\r\nContent-Length: 2\r\n\r\n{}";
        let got = frames(Framing::ContentLength, input, 100).await;
        assert!(matches!(&got[0], Frame::Malformed(reason) if reason.contains('x')), "{got:?}");
        assert_eq!(got[1..], [msg("{}")]);
    }

    #[tokio::test]
    async fn a_content_length_with_a_sign_is_malformed() {
        for value in ["+2", "-2", "2 2", "0x2", "\u{661}"] {
            let input = format!("Content-Length: {value}\r\n\r\n{{}}Content-Length: 2\r\n\r\n[]");
            let got = frames(Framing::ContentLength, input.as_bytes(), 100).await;
            assert!(matches!(&got[0], Frame::Malformed(reason) if reason.contains(value)), "{value}: {got:?}");
            assert_eq!(got.last(), Some(&msg("[]")), "{value}: {got:?}");
        }
    }

    #[tokio::test]
    async fn conflicting_content_length_headers_are_malformed() {
        let got = frames(Framing::ContentLength, b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n", 100).await;
        assert!(matches!(&got[0], Frame::Malformed(reason) if reason.contains("conflicting")), "{got:?}");
        let got = frames(Framing::ContentLength, b"Content-Length: 2\r\ncontent-length: 2\r\n\r\n{}", 100).await;
        assert_eq!(got, [msg("{}")]);
    }

    #[tokio::test]
    async fn an_oversized_body_is_skipped() {
        let input = b"Content-Length: 10\r\n\r\n0123456789Content-Length: 2\r\n\r\n{}";
        let got = frames(Framing::ContentLength, input, 5).await;
        assert_eq!(got, vec![Frame::TooLarge { size: Some(10) }, msg("{}")]);
    }

    #[tokio::test]
    async fn truncated_input_ends_without_a_frame() {
        assert!(frames(Framing::ContentLength, b"Content-Length: 10\r\n\r\n{}", 100).await.is_empty());
        assert!(frames(Framing::ContentLength, b"Content-Len", 100).await.is_empty());
    }

    #[tokio::test]
    async fn an_oversized_body_is_reported_before_it_has_streamed_past() {
        // The declared body never arrives in full; the frame is reported
        // anyway, at once.
        let (mut client, server) = tokio::io::duplex(1024);
        let mut reader = FrameReader::new(server, Framing::ContentLength, 100);
        tokio::io::AsyncWriteExt::write_all(&mut client, b"Content-Length: 18446744073709551615\r\n\r\n{}")
            .await
            .unwrap();
        let frame = reader.next_frame().await.unwrap();
        assert_eq!(frame, Some(Frame::TooLarge { size: Some(usize::MAX) }));
        drop(client);
        assert_eq!(reader.next_frame().await.unwrap(), None);
    }
}
