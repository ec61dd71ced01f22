//! Framing: turning a byte stream into messages and back.
//!
//! Two codecs: newline-delimited JSON (MCP's stdio transport) and
//! `Content-Length` headers (LSP and DAP base protocol).

use std::io;
use std::ops::Range;
use std::str::FromStr;

use tokio::io::{AsyncRead, AsyncReadExt};

/// How messages are delimited on a byte stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Framing {
    /// One JSON message per line (MCP stdio). Blank lines are skipped.
    #[default]
    NewlineDelimited,
    /// `Content-Length: N\r\n\r\n` followed by N bytes (LSP, DAP). Header
    /// names are case-insensitive; other headers are ignored.
    ContentLength,
}

impl FromStr for Framing {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "ndjson" | "newline" | "newline-delimited" | "lines" => Ok(Framing::NewlineDelimited),
            "content-length" | "lsp" | "headers" => Ok(Framing::ContentLength),
            other => Err(format!("unknown framing `{other}`; expected `ndjson` or `content-length`")),
        }
    }
}

impl Framing {
    /// Appends `message` to `out` as one frame.
    pub fn encode(self, message: &[u8], out: &mut Vec<u8>) {
        match self {
            Framing::NewlineDelimited => {
                let start = out.len();
                out.extend_from_slice(message);
                Self::end_line(out, start);
            }
            Framing::ContentLength => {
                out.extend_from_slice(b"Content-Length: ");
                out.extend_from_slice(message.len().to_string().as_bytes());
                out.extend_from_slice(b"\r\n\r\n");
                out.extend_from_slice(message);
            }
        }
    }

    /// Makes `out[start..]`, one message, a newline-delimited frame in
    /// place (what [`Framing::encode`] does after copying the message).
    pub(crate) fn end_line(out: &mut Vec<u8>, start: usize) {
        // Raw newlines can only be insignificant whitespace inside JSON
        // (strings escape them), so blanking them is lossless. Usually
        // there are none: look fast, rewrite only then.
        if has_line_break(&out[start..]) {
            Self::blank_line_breaks(&mut out[start..]);
        }
        out.push(b'\n');
    }

    /// Turns the raw `\n` and `\r` of `message` into spaces.
    pub(crate) fn blank_line_breaks(message: &mut [u8]) {
        for byte in message {
            if *byte == b'\n' || *byte == b'\r' {
                *byte = b' ';
            }
        }
    }
}

/// Whether `bytes` hold a `\n` or `\r`. Eight bytes at a time, the last
/// eight overlapping the words before them: no word with a byte below
/// 0x0E (which compact JSON, our answers, nearly never has: strings
/// escape control characters) means neither is there; only then are the
/// bytes looked at one by one. Answers are short, so memchr's setup per
/// call costs more than this whole pass (about 90 instructions per answer
/// in the stream benchmark; a byte-wise pass the compiler vectorizes,
/// about 120 with its call).
fn has_line_break(bytes: &[u8]) -> bool {
    let is_break = |&b: &u8| b == b'\n' || b == b'\r';
    let Some(last) = bytes.len().checked_sub(8) else { return bytes.iter().any(is_break) };
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or_default());
    let mut low = low_bytes(word(last));
    let mut at = 0;
    while at < last {
        low |= low_bytes(word(at));
        at += 8;
    }
    low != 0 && bytes.iter().any(is_break)
}

/// Nonzero when a byte of `word` is below 0x0E (`\t`, `\n`, `\r` and the
/// controls before them): the classic "has less than" word test, exact
/// for the word as a whole.
#[inline]
fn low_bytes(word: u64) -> u64 {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    word.wrapping_sub(ONES * 0x0E) & !word & HIGHS
}

/// One unit read off a stream.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A complete message (not yet parsed as JSON).
    Message(Vec<u8>),
    /// A message longer than the limit; its bytes were skipped.
    TooLarge {
        /// Its size in bytes, when the framing tells it.
        size: Option<usize>,
    },
    /// Framing that could not be understood (for example a bad header); the
    /// reader has skipped ahead to where the next frame should start.
    Malformed(String),
}

/// A [`Frame`] whose message is borrowed from the reader's buffer.
pub(crate) enum BorrowedFrame<'a> {
    /// A complete message (not yet parsed as JSON).
    Message(&'a [u8]),
    /// As [`Frame::TooLarge`].
    TooLarge {
        /// Its size in bytes, when the framing tells it.
        size: Option<usize>,
    },
    /// As [`Frame::Malformed`].
    Malformed(String),
}

/// A frame as found: a message is where it is in the reader's buffer.
enum RawFrame {
    Message(Range<usize>),
    TooLarge(Option<usize>),
    Malformed(String),
}

/// Longest accepted header line in `Content-Length` framing.
const MAX_HEADER_LINE: usize = 8 * 1024;
const READ_CHUNK: usize = 64 * 1024;
/// Capacity the read buffer keeps at most between messages.
const KEEP_CAPACITY: usize = 4 * READ_CHUNK;

/// Reads frames from any `AsyncRead`, never holding more than the size
/// limit (plus one read chunk) in memory.
pub struct FrameReader<R> {
    reader: R,
    framing: Framing,
    max_message_size: usize,
    buf: Vec<u8>,
    pos: usize,
    eof: bool,
    /// Bytes of an oversized body still to skip. The frame is reported as
    /// soon as its header is read, so a peer learns of it (and it is logged)
    /// without waiting for the whole body to stream past.
    skip_pending: usize,
}

impl<R> std::fmt::Debug for FrameReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameReader")
            .field("framing", &self.framing)
            .field("max_message_size", &self.max_message_size)
            .field("buffered", &(self.buf.len() - self.pos))
            .field("eof", &self.eof)
            .finish_non_exhaustive()
    }
}

/// A line found in the buffer.
enum Line {
    /// `buf[start..end]`, without the terminator.
    Complete { start: usize, end: usize },
    /// The line exceeded the limit; it was consumed and skipped.
    TooLong { size: usize },
    /// The stream ended; `rest` is what followed the last newline.
    Eof { rest: Option<(usize, usize)> },
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// A reader of `framing` frames, each at most `max_message_size` bytes.
    pub fn new(reader: R, framing: Framing, max_message_size: usize) -> Self {
        FrameReader {
            reader,
            framing,
            max_message_size,
            // Allocated by the first read, at its full size: starting
            // smaller made that read grow it by a copy, which touched a
            // page or two of memory on every new connection, idle or not.
            buf: Vec::new(),
            pos: 0,
            eof: false,
            skip_pending: 0,
        }
    }

    /// The next frame, or `None` at end of stream.
    pub async fn next_frame(&mut self) -> io::Result<Option<Frame>> {
        Ok(self.next_raw().await?.map(|frame| match frame {
            RawFrame::Message(range) => Frame::Message(self.buf[range].to_vec()),
            RawFrame::TooLarge(size) => Frame::TooLarge { size },
            RawFrame::Malformed(reason) => Frame::Malformed(reason),
        }))
    }

    /// The next frame, with a message borrowed from the reader's buffer
    /// instead of copied (valid until the next read), or `None` at end of
    /// stream.
    pub(crate) async fn next_borrowed(&mut self) -> io::Result<Option<BorrowedFrame<'_>>> {
        Ok(self.next_raw().await?.map(|frame| match frame {
            RawFrame::Message(range) => BorrowedFrame::Message(&self.buf[range]),
            RawFrame::TooLarge(size) => BorrowedFrame::TooLarge { size },
            RawFrame::Malformed(reason) => BorrowedFrame::Malformed(reason),
        }))
    }

    /// The next message, if a complete one is already buffered; `None`
    /// when [`FrameReader::next_borrowed`] must read (or has anything
    /// else to report: an oversized line, headers). Newline framing only.
    #[inline]
    pub(crate) fn next_buffered(&mut self) -> Option<BorrowedFrame<'_>> {
        if self.framing != Framing::NewlineDelimited {
            return None;
        }
        loop {
            let rest = &self.buf[self.pos..];
            let offset = memchr::memchr(b'\n', rest)?;
            if offset > self.max_message_size {
                return None; // left for next_borrowed to skip and report
            }
            self.pos += offset + 1;
            let line = trim_line(&rest[..offset]);
            if !line.is_empty() {
                return Some(BorrowedFrame::Message(line));
            }
        }
    }

    async fn next_raw(&mut self) -> io::Result<Option<RawFrame>> {
        match self.framing {
            Framing::NewlineDelimited => self.next_line_frame().await,
            Framing::ContentLength => self.next_header_frame().await,
        }
    }

    async fn next_line_frame(&mut self) -> io::Result<Option<RawFrame>> {
        loop {
            let (start, end) = match self.next_line(self.max_message_size).await? {
                Line::Complete { start, end } => (start, end),
                Line::TooLong { size } => return Ok(Some(RawFrame::TooLarge(Some(size)))),
                Line::Eof { rest: Some((start, end)) } => (start, end),
                Line::Eof { rest: None } => return Ok(None),
            };
            let (start, end) = trim_range(&self.buf, start, end);
            if start < end {
                return Ok(Some(RawFrame::Message(start..end)));
            }
        }
    }

    async fn next_header_frame(&mut self) -> io::Result<Option<RawFrame>> {
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

    /// Finds the next `\n`-terminated line, reading as needed. Lines longer
    /// than `limit` are skipped up to their newline.
    async fn next_line(&mut self, limit: usize) -> io::Result<Line> {
        // Bytes after `pos` already searched; relative, since `fill` may
        // move the buffer's contents.
        let mut scanned = 0usize;
        let mut skipped = 0usize;
        loop {
            let from = self.pos + scanned;
            if let Some(offset) = memchr::memchr(b'\n', &self.buf[from..]) {
                let end = from + offset;
                let start = self.pos;
                self.pos = end + 1;
                if skipped > 0 || end - start > limit {
                    return Ok(Line::TooLong { size: skipped + (end - start) });
                }
                return Ok(Line::Complete { start, end });
            }
            scanned = self.buf.len() - self.pos;
            if scanned > limit {
                // Drop what we have of an oversized line, keep skipping.
                skipped += scanned;
                self.pos = self.buf.len();
                scanned = 0;
            }
            if !self.fill().await? {
                let start = self.pos;
                let end = self.buf.len();
                self.pos = end;
                if skipped > 0 {
                    return Ok(Line::TooLong { size: skipped + (end - start) });
                }
                let rest = (end > start).then_some((start, end));
                return Ok(Line::Eof { rest });
            }
        }
    }

    /// Takes exactly `n` bytes (where they are in the buffer, until the
    /// next read), or `None` if the stream ends first.
    async fn take(&mut self, n: usize) -> io::Result<Option<Range<usize>>> {
        while self.buf.len() - self.pos < n {
            if !self.fill().await? {
                return Ok(None);
            }
        }
        let body = self.pos..self.pos + n;
        self.pos += n;
        Ok(Some(body))
    }

    /// Skips exactly `n` bytes; `false` if the stream ends first.
    async fn skip(&mut self, mut n: usize) -> io::Result<bool> {
        loop {
            let available = self.buf.len() - self.pos;
            if available >= n {
                self.pos += n;
                return Ok(true);
            }
            n -= available;
            self.pos = self.buf.len();
            if !self.fill().await? {
                return Ok(false);
            }
        }
    }

    /// Reads more bytes, compacting the buffer first. `false` at end of
    /// stream.
    async fn fill(&mut self) -> io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        // A buffer that grew for one large message is given back once that
        // message is consumed, so an idle connection does not keep its peak.
        if self.buf.capacity() > KEEP_CAPACITY && self.buf.len() < READ_CHUNK {
            self.buf.shrink_to(READ_CHUNK * 2);
        }
        self.buf.reserve(READ_CHUNK);
        let read = self.reader.read_buf(&mut self.buf).await?;
        if read == 0 {
            self.eof = true;
        }
        Ok(read > 0)
    }
}

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

/// `buf[start..end]` without leading and trailing ASCII whitespace, as a
/// range of `buf`.
#[inline]
fn trim_range(buf: &[u8], start: usize, end: usize) -> (usize, usize) {
    let line = &buf[start..end];
    // Nearly every line starts with `{` or `[` and ends with `}` or `]`:
    // two loads instead of the two scans below.
    if let (Some(first), Some(last)) = (line.first(), line.last())
        && !first.is_ascii_whitespace()
        && !last.is_ascii_whitespace()
    {
        return (start, end);
    }
    let head = line.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(line.len());
    let tail = line.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(head, |i| i + 1);
    (start + head, start + tail)
}

/// `line` without leading and trailing ASCII whitespace, looking at its
/// two end bytes first (as [`trim_range`] does).
#[inline]
fn trim_line(line: &[u8]) -> &[u8] {
    if let (Some(first), Some(last)) = (line.first(), line.last())
        && !first.is_ascii_whitespace()
        && !last.is_ascii_whitespace()
    {
        return line;
    }
    trim_ascii(line)
}

fn trim_ascii(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(start, |i| i + 1);
    &bytes[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_breaks_are_found_anywhere_and_blanked() {
        assert!(!has_line_break(b""));
        assert!(!has_line_break(&[b'a'; 200]));
        for at in [0, 63, 64, 65, 199] {
            for byte in [b'\n', b'\r'] {
                let mut bytes = vec![b'a'; 200];
                bytes[at] = byte;
                assert!(has_line_break(&bytes), "{at} {byte}");
            }
        }
        // Every byte value at every place of a word and of the tail, next
        // to bytes that are near the word test's edges (tab, 0x0E, 0x80,
        // 0xFF), against the plain definition.
        for len in [1, 7, 8, 9, 16, 19] {
            for at in 0..len {
                for value in 0..=255u8 {
                    let mut bytes: Vec<u8> =
                        [b'\t', 0x0E, 0x80, 0xFF, b'{'].iter().copied().cycle().take(len).collect();
                    bytes[at] = value;
                    let expected = bytes.iter().any(|&b| b == b'\n' || b == b'\r');
                    assert_eq!(has_line_break(&bytes), expected, "{bytes:?}");
                }
            }
        }
        let mut out = b"[1,\n2,\r\n3]".to_vec();
        Framing::end_line(&mut out, 0);
        assert_eq!(out, b"[1, 2,  3]\n");
    }

    async fn frames(framing: Framing, input: &[u8], max: usize) -> Vec<Frame> {
        let mut reader = FrameReader::new(input, framing, max);
        let mut out = Vec::new();
        while let Some(frame) = reader.next_frame().await.unwrap() {
            out.push(frame);
        }
        out
    }

    fn msg(s: &str) -> Frame {
        Frame::Message(s.as_bytes().to_vec())
    }

    #[tokio::test]
    async fn lines_skip_blanks_and_accept_a_last_line_without_newline() {
        let got = frames(Framing::NewlineDelimited, b"{\"a\":1}\r\n\n  \n{\"b\":2}", 100).await;
        assert_eq!(got, vec![msg("{\"a\":1}"), msg("{\"b\":2}")]);
    }

    #[tokio::test]
    async fn an_oversized_line_is_skipped_and_the_next_one_read() {
        let mut input = vec![b'x'; 200_000];
        input.extend_from_slice(b"\n{}\n");
        let got = frames(Framing::NewlineDelimited, &input, 1000).await;
        assert_eq!(got, vec![Frame::TooLarge { size: Some(200_000) }, msg("{}")]);
    }

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
        // Regression: any header containing `content-length:` was read as
        // the length, so this valid frame was refused and its request lost.
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
    async fn buffered_lines_are_taken_without_reading_and_oversized_ones_left_to_the_reader() {
        let input: &[u8] = b"{\"a\":1}\n\n  \n{\"b\":2}\r\n0123456789\n{\"c\":3}\n{\"d\"";
        let mut reader = FrameReader::new(input, Framing::NewlineDelimited, 8);
        assert!(reader.next_buffered().is_none(), "nothing is read yet");
        assert!(matches!(reader.next_borrowed().await.unwrap(), Some(BorrowedFrame::Message(b"{\"a\":1}"))));
        assert!(matches!(reader.next_buffered(), Some(BorrowedFrame::Message(b"{\"b\":2}"))));
        assert!(reader.next_buffered().is_none(), "an oversized line is not taken");
        let skipped = reader.next_borrowed().await.unwrap();
        assert!(matches!(skipped, Some(BorrowedFrame::TooLarge { size: Some(10) })));
        assert!(matches!(reader.next_buffered(), Some(BorrowedFrame::Message(b"{\"c\":3}"))));
        assert!(reader.next_buffered().is_none(), "an unfinished line waits for more input");
        assert!(matches!(reader.next_borrowed().await.unwrap(), Some(BorrowedFrame::Message(b"{\"d\""))));
        assert!(reader.next_borrowed().await.unwrap().is_none());
        let mut headers = FrameReader::new(&b"Content-Length: 2\r\n\r\n{}"[..], Framing::ContentLength, 8);
        assert!(matches!(headers.next_borrowed().await.unwrap(), Some(BorrowedFrame::Message(b"{}"))));
        assert!(headers.next_buffered().is_none());
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

    #[test]
    fn encode_frames() {
        let mut out = Vec::new();
        Framing::ContentLength.encode(b"{\"a\":\"\xc3\xa9\"}", &mut out);
        assert_eq!(out, b"Content-Length: 10\r\n\r\n{\"a\":\"\xc3\xa9\"}");
        out.clear();
        Framing::NewlineDelimited.encode(b"{\n\"a\": 1}", &mut out);
        assert_eq!(out, b"{ \"a\": 1}\n");
    }
}
