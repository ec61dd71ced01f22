//! Framing: turning a byte stream into messages and back.
//!
//! Two codecs: newline-delimited JSON (MCP's stdio transport) and
//! `Content-Length` headers (LSP and DAP base protocol). What they share
//! is here: the [`Framing`] choice, the frames, and the [`FrameReader`]'s
//! buffer (reading lines and bodies within the size limit); each codec's
//! own reading and writing is in a file of its own (`newline`,
//! `content_length`).

mod content_length;
mod newline;

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

/// How much each read asks for.
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
            // Allocated by the first read, at its full size: a smaller
            // start would have that read grow it by a copy, and would
            // touch memory on every new connection, idle or not.
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

    /// The next frame as found, read by the reader's codec.
    async fn next_raw(&mut self) -> io::Result<Option<RawFrame>> {
        match self.framing {
            Framing::NewlineDelimited => self.next_line_frame().await,
            Framing::ContentLength => self.next_header_frame().await,
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

fn trim_ascii(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(start, |i| i + 1);
    &bytes[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every frame `input` holds, read with `framing` and a limit of `max`.
    pub(super) async fn frames(framing: Framing, input: &[u8], max: usize) -> Vec<Frame> {
        let mut reader = FrameReader::new(input, framing, max);
        let mut out = Vec::new();
        while let Some(frame) = reader.next_frame().await.unwrap() {
            out.push(frame);
        }
        out
    }
    pub(super) fn msg(s: &str) -> Frame {
        Frame::Message(s.as_bytes().to_vec())
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
