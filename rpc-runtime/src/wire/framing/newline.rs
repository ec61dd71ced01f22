//! Newline-delimited JSON: one message per line, blank lines skipped.
//! Writing a frame blanks the raw line breaks of the message (they can
//! only be insignificant whitespace in JSON); reading takes a line, and
//! the lines already buffered without a read.

use std::io;

use tokio::io::AsyncRead;

use super::{BorrowedFrame, FrameReader, Framing, Line, RawFrame, trim_ascii};

impl Framing {
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
/// bytes looked at one by one. Answers are short, so this whole pass
/// costs less than memchr's setup per call, or than a byte-wise pass the
/// compiler vectorizes (with its call).
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

impl<R: AsyncRead + Unpin> FrameReader<R> {
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

    /// The next newline-delimited frame: the next line that is not
    /// blank, without its surrounding whitespace.
    pub(super) async fn next_line_frame(&mut self) -> io::Result<Option<RawFrame>> {
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

#[cfg(test)]
mod tests {
    use super::super::tests::{frames, msg};
    use super::*;
    use crate::wire::framing::Frame;

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
}
