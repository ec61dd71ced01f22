//! Arbitrary byte streams through `FrameReader`, arriving in arbitrary
//! pieces (with reads that are not ready in between).
//!
//! The first byte picks the framing, the mode and the size limit; the
//! next eight seed the split points. Then, in `raw` mode, the rest is the
//! stream: reading it must never panic, must end, must give the same
//! frames however the stream is split, and each message must fit the
//! limit. In `round-trip` mode the rest is a list of messages (a length
//! byte, then that many bytes); their encoding must read back as the same
//! messages.

#![no_main]

use std::io;
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll};

use libfuzzer_sys::fuzz_target;
use rpc_runtime::{Framing, wire::{Frame, FrameReader}};
use tokio::io::{AsyncRead, ReadBuf};

fuzz_target!(|data: &[u8]| {
    let Some((&control, rest)) = data.split_first() else { return };
    let (seed, stream) = rest.split_at(rest.len().min(8));
    let framing = if control & 1 == 0 { Framing::NewlineDelimited } else { Framing::ContentLength };
    let round_trip = control & 2 != 0;
    let max = 1 + usize::from(control >> 2) * 3;
    let seed = seed.iter().fold(0x9e37_79b9_7f4a_7c15_u64, |acc, &b| acc.rotate_left(8) ^ u64::from(b)) | 1;
    if round_trip {
        check_round_trip(framing, seed, stream);
    } else {
        check_raw(framing, max, seed, stream);
    }
});

fn check_raw(framing: Framing, max: usize, seed: u64, stream: &[u8]) {
    let whole = read_all(framing, max, Pieces::whole(stream));
    let split = read_all(framing, max, Pieces::new(stream, seed));
    assert_eq!(whole, split, "the frames do not depend on how the stream is split");
    for frame in &whole {
        if let Frame::Message(message) = frame {
            assert!(message.len() <= max, "a message of {} bytes passed a limit of {max}", message.len());
            if framing == Framing::NewlineDelimited {
                assert!(!message.is_empty() && !message.contains(&b'\n'), "{message:?}");
                assert!(!message[0].is_ascii_whitespace(), "{message:?}");
                assert!(!message[message.len() - 1].is_ascii_whitespace(), "{message:?}");
            }
        }
    }
}

fn check_round_trip(framing: Framing, seed: u64, mut input: &[u8]) {
    let mut messages = Vec::new();
    while let Some((&len, rest)) = input.split_first() {
        let len = usize::from(len).min(rest.len());
        messages.push(&rest[..len]);
        input = &rest[len..];
    }
    let mut stream = Vec::new();
    for message in &messages {
        framing.encode(message, &mut stream);
    }
    let expected: Vec<Frame> = messages
        .iter()
        .filter_map(|message| match framing {
            Framing::ContentLength => Some(message.to_vec()),
            // A line: line breaks became spaces; it is trimmed, and a blank
            // one is skipped.
            Framing::NewlineDelimited => {
                let line: Vec<u8> = message.iter().map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b }).collect();
                let trimmed = line.trim_ascii();
                (!trimmed.is_empty()).then(|| trimmed.to_vec())
            }
        })
        .map(Frame::Message)
        .collect();
    let got = read_all(framing, 256, Pieces::new(&stream, seed));
    assert_eq!(got, expected);
}

fn read_all(framing: Framing, max: usize, pieces: Pieces<'_>) -> Vec<Frame> {
    let mut reader = FrameReader::new(pieces, framing, max);
    runtime().block_on(async move {
        let mut frames = Vec::new();
        while let Some(frame) = reader.next_frame().await.expect("reading from memory cannot fail") {
            frames.push(frame);
        }
        frames
    })
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| tokio::runtime::Builder::new_current_thread().build().expect("a runtime"))
}

/// A stream that hands out its bytes in pseudo-random pieces of 1 to 32
/// bytes, sometimes saying "not ready yet" first.
struct Pieces<'a> {
    bytes: &'a [u8],
    state: u64,
}

impl<'a> Pieces<'a> {
    fn new(bytes: &'a [u8], seed: u64) -> Self {
        Pieces { bytes, state: seed }
    }

    /// Everything in one read (state 0 means "no splitting").
    fn whole(bytes: &'a [u8]) -> Self {
        Pieces { bytes, state: 0 }
    }

    fn next_random(&mut self) -> u64 {
        // xorshift64
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state
    }
}

impl AsyncRead for Pieces<'_> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let mut len = self.bytes.len().min(buf.remaining());
        if self.state != 0 {
            let random = self.next_random();
            if random.is_multiple_of(5) {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            len = len.min(1 + (random >> 8) as usize % 32);
        }
        let (now, later) = self.bytes.split_at(len);
        buf.put_slice(now);
        self.bytes = later;
        Poll::Ready(Ok(()))
    }
}
