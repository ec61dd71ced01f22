//! The server's side of a WebSocket connection once the handshake is
//! done: RFC 6455 framing, written for the server's data path.
//!
//! It speaks tungstenite's vocabulary (`Message`, `CloseFrame`, its
//! error type) and behaves as tungstenite's server role does, so that
//! [`super::ws`] runs it like a `WebSocketStream`: masked client frames
//! (an unmasked one fails the connection), no extensions (reserved bits
//! fail it), fragmented messages joined (control frames may come in
//! between), text checked for UTF-8 once whole, frame and message size
//! limits (checked from the header, before the payload is read), pings
//! answered with pongs and a close frame with a close frame, both sent
//! with the next write or read.
//!
//! What it does not do that tungstenite did: zero its read buffer before
//! each read (it reads into spare capacity), turn each frame into a
//! `Frame` and then a `Message` through several layers, or copy each
//! outgoing message into a frame of its own (frames are written straight
//! into one output buffer). Those costs were most of what a pipelined
//! request cost over WebSocket beyond TCP. The client keeps tungstenite.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::{Buf, BytesMut};
use futures_util::{Sink, Stream};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_tungstenite::tungstenite::error::{CapacityError, ProtocolError};
use tokio_tungstenite::tungstenite::protocol::frame::coding::{CloseCode, Data};
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Error as WsError, Message, Utf8Bytes};

/// Spare room kept in the read buffer for each read.
const READ_CHUNK: usize = 16 * 1024;
/// Output beyond this is written out before more is accepted.
const WRITE_HIGH: usize = 128 * 1024;
/// A buffer grown past this for a large message is given back once it is
/// empty again (as the stream transport's are: an idle connection does
/// not keep its peak).
const KEEP_CAPACITY: usize = 256 * 1024;

const OP_CONTINUE: u8 = 0x0;
const OP_TEXT: u8 = 0x1;
const OP_BINARY: u8 = 0x2;
const OP_CLOSE: u8 = 0x8;
const OP_PING: u8 = 0x9;
const OP_PONG: u8 = 0xA;

/// Where the closing handshake stands (as tungstenite tracks it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Active,
    /// We sent a close frame.
    ClosedByUs,
    /// The client sent one; ours is owed.
    ClosedByPeer,
    /// Both sent one.
    CloseAcknowledged,
    Terminated,
}

impl State {
    fn can_read(self) -> bool {
        matches!(self, State::Active | State::ClosedByUs)
    }
}

/// A frame's header, once all of it is in the buffer.
#[derive(Clone, Copy, Debug)]
struct Header {
    fin: bool,
    reserved: bool,
    opcode: u8,
    mask: Option<[u8; 4]>,
    length: u64,
}

/// Parses a frame header at the start of `input`: the header and its
/// size, or `None` when more bytes are needed.
fn parse_header(input: &[u8]) -> Option<(Header, usize)> {
    let [first, second, ..] = *input else { return None };
    let (length, mut size) = match second & 0x7F {
        126 => (u64::from(u16::from_be_bytes(input.get(2..4)?.try_into().ok()?)), 4),
        127 => (u64::from_be_bytes(input.get(2..10)?.try_into().ok()?), 10),
        short => (u64::from(short), 2),
    };
    let mask = if second & 0x80 != 0 {
        let key: [u8; 4] = input.get(size..size + 4)?.try_into().ok()?;
        size += 4;
        Some(key)
    } else {
        None
    };
    let header = Header { fin: first & 0x80 != 0, reserved: first & 0x70 != 0, opcode: first & 0x0F, mask, length };
    Some((header, size))
}

/// XORs `payload` with the masking key, eight bytes at a time; whether
/// the result is all ASCII (found on the way, for text).
fn unmask(payload: &mut [u8], key: [u8; 4]) -> bool {
    let wide = u64::from_ne_bytes([key[0], key[1], key[2], key[3], key[0], key[1], key[2], key[3]]);
    let (words, rest) = payload.as_chunks_mut::<8>();
    let mut seen = 0u64;
    for word in words {
        let unmasked = u64::from_ne_bytes(*word) ^ wide;
        seen |= unmasked;
        *word = unmasked.to_ne_bytes();
    }
    if !rest.is_empty() {
        // The last bytes as one word too (they start at a multiple of 4,
        // so the key lines up; the padding is zero and stays ASCII).
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        let unmasked = (u64::from_ne_bytes(word) ^ wide).to_ne_bytes();
        rest.copy_from_slice(&unmasked[..rest.len()]);
        word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        seen |= u64::from_ne_bytes(word);
    }
    seen & 0x8080_8080_8080_8080 == 0
}

/// Appends one unmasked, final frame (a server's frames are never masked).
fn put_frame(out: &mut Vec<u8>, opcode: u8, payload: &[u8]) {
    let length = payload.len();
    out.reserve(length + 10);
    out.push(0x80 | opcode);
    if length < 126 {
        out.push(length as u8);
    } else if let Ok(short) = u16::try_from(length) {
        out.push(126);
        out.extend_from_slice(&short.to_be_bytes());
    } else {
        out.push(127);
        out.extend_from_slice(&(length as u64).to_be_bytes());
    }
    out.extend_from_slice(payload);
}

fn close_payload(frame: Option<&CloseFrame>) -> Vec<u8> {
    let Some(frame) = frame else { return Vec::new() };
    let mut payload = u16::from(frame.code).to_be_bytes().to_vec();
    payload.extend_from_slice(frame.reason.as_bytes());
    payload
}

fn too_long(size: u64, max_size: usize) -> WsError {
    let size = usize::try_from(size).unwrap_or(usize::MAX);
    WsError::Capacity(CapacityError::MessageTooLong { size, max_size })
}

/// A control frame owed to the client: a pong or the close reply.
struct Reply {
    opcode: u8,
    payload: Vec<u8>,
}

/// The server's side of one WebSocket connection over `io`, after the
/// handshake: a stream of messages and a sink of them.
pub(crate) struct ServerFrames<S> {
    io: S,
    input: BytesMut,
    /// The header of the frame being read, once parsed.
    header: Option<Header>,
    /// A fragmented message being received: whether it is text, and its
    /// bytes so far.
    fragments: Option<Fragments>,
    output: Vec<u8>,
    /// Bytes of `output` already written.
    written: usize,
    reply: Option<Reply>,
    /// A reply could not be written out during a read: try again.
    reply_unflushed: bool,
    max_message_size: usize,
    state: State,
    /// The stream returned an error or its end: it returns nothing more.
    ended: bool,
}

impl<S: AsyncRead + AsyncWrite + Unpin> ServerFrames<S> {
    /// The connection over `io`, accepting messages of at most
    /// `max_message_size` bytes (whole or in one frame).
    pub(crate) fn new(io: S, max_message_size: usize) -> Self {
        ServerFrames {
            io,
            input: BytesMut::new(),
            header: None,
            fragments: None,
            output: Vec::new(),
            written: 0,
            reply: None,
            reply_unflushed: false,
            max_message_size,
            state: State::Active,
            ended: false,
        }
    }

    /// Reads more input into spare capacity (no zeroing); 0 at its end.
    fn poll_fill(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        if self.input.capacity() - self.input.len() < READ_CHUNK {
            // Reclaims the whole allocation when the messages split off it
            // are gone, so its size shows only now.
            self.input.reserve(READ_CHUNK);
        }
        if self.input.is_empty() && self.header.is_none() && self.input.capacity() > KEEP_CAPACITY {
            self.input = BytesMut::with_capacity(READ_CHUNK);
        }
        let mut buf = ReadBuf::uninit(self.input.spare_capacity_mut());
        ready!(Pin::new(&mut self.io).poll_read(cx, &mut buf))?;
        let read = buf.filled().len();
        // SAFETY: `poll_read` initialized the first `read` bytes of the
        // spare capacity it was given (that is what `filled` reports).
        unsafe { self.input.set_len(self.input.len() + read) };
        Poll::Ready(Ok(read))
    }

    /// The next whole frame: its header and unmasked payload.
    fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Result<(Header, BytesMut), WsError>> {
        loop {
            if self.header.is_none() {
                if let Some((header, size)) = parse_header(&self.input) {
                    // Opcodes RFC 6455 reserves, refused from the header.
                    if matches!(header.opcode, 0x3..=0x7 | 0xB..=0xF) {
                        return Poll::Ready(Err(WsError::Protocol(ProtocolError::InvalidOpcode(header.opcode))));
                    }
                    if header.length > self.max_message_size as u64 {
                        return Poll::Ready(Err(too_long(header.length, self.max_message_size)));
                    }
                    self.input.advance(size);
                    // Room for the payload, but no more than the buffer
                    // keeps ahead of what arrived: a header announcing a
                    // large frame does not cost its size until it comes.
                    self.input.reserve((header.length as usize).min(KEEP_CAPACITY));
                    self.header = Some(header);
                }
            }
            if let Some(header) = self.header {
                if self.input.len() as u64 >= header.length {
                    self.header = None;
                    let mut payload = self.input.split_to(header.length as usize);
                    let Some(key) = header.mask else {
                        return Poll::Ready(Err(WsError::Protocol(ProtocolError::UnmaskedFrameFromClient)));
                    };
                    let _ascii = unmask(&mut payload, key);
                    return Poll::Ready(Ok((header, payload)));
                }
            }
            if ready!(self.poll_fill(cx)).map_err(|err| self.io_error(err))? == 0 {
                let state = std::mem::replace(&mut self.state, State::Terminated);
                return Poll::Ready(Err(match state {
                    State::ClosedByPeer | State::CloseAcknowledged => WsError::ConnectionClosed,
                    _ => WsError::Protocol(ProtocolError::ResetWithoutClosingHandshake),
                }));
            }
        }
    }

    /// One frame's worth of reading: a message, or `None` for a frame
    /// that only continued one.
    fn poll_frame_message(&mut self, cx: &mut Context<'_>) -> Poll<Result<Option<Message>, WsError>> {
        let (header, payload) = ready!(self.poll_frame(cx))?;
        if !self.state.can_read() {
            return Poll::Ready(Err(WsError::Protocol(ProtocolError::ReceivedAfterClosing)));
        }
        if header.reserved {
            return Poll::Ready(Err(WsError::Protocol(ProtocolError::NonZeroReservedBits)));
        }
        Poll::Ready(if header.opcode & 0x8 != 0 { self.control(header, payload) } else { self.data(header, payload) })
    }

    fn control(&mut self, header: Header, payload: BytesMut) -> Result<Option<Message>, WsError> {
        if !header.fin {
            return Err(WsError::Protocol(ProtocolError::FragmentedControlFrame));
        }
        if payload.len() > 125 {
            return Err(WsError::Protocol(ProtocolError::ControlFrameTooBig));
        }
        match header.opcode {
            OP_CLOSE => {
                let close = match payload.len() {
                    0 => None,
                    1 => return Err(WsError::Protocol(ProtocolError::InvalidCloseSequence)),
                    _ => {
                        let code = CloseCode::from(u16::from_be_bytes([payload[0], payload[1]]));
                        let reason = Utf8Bytes::try_from(payload.freeze().slice(2..))?;
                        Some(CloseFrame { code, reason })
                    }
                };
                Ok(self.closed_by_peer(close).map(Message::Close))
            }
            OP_PING => {
                let payload = payload.freeze();
                // No pongs once we sent a close frame.
                if self.state == State::Active {
                    self.set_reply(OP_PONG, payload.to_vec());
                }
                Ok(Some(Message::Ping(payload)))
            }
            OP_PONG => Ok(Some(Message::Pong(payload.freeze()))),
            other => Err(WsError::Protocol(ProtocolError::UnknownControlFrameType(other))),
        }
    }

    /// A close frame arrived: what to hand on (nothing if it was already
    /// closed both ways).
    fn closed_by_peer(&mut self, close: Option<CloseFrame>) -> Option<Option<CloseFrame>> {
        match self.state {
            State::Active => {
                self.state = State::ClosedByPeer;
                let close = close.map(|frame| {
                    if frame.code.is_allowed() {
                        frame
                    } else {
                        CloseFrame { code: CloseCode::Protocol, reason: Utf8Bytes::from_static("Protocol violation") }
                    }
                });
                self.set_reply(OP_CLOSE, close_payload(close.as_ref()));
                Some(close)
            }
            State::ClosedByUs => {
                self.state = State::CloseAcknowledged;
                Some(close)
            }
            State::ClosedByPeer | State::CloseAcknowledged | State::Terminated => None,
        }
    }

    fn data(&mut self, header: Header, payload: BytesMut) -> Result<Option<Message>, WsError> {
        let max = self.max_message_size;
        let started = match (header.opcode, self.fragments.as_mut()) {
            (OP_CONTINUE, None) => return Err(WsError::Protocol(ProtocolError::UnexpectedContinueFrame)),
            (OP_CONTINUE, Some(fragments)) => {
                let size = fragments.joined.len() as u64 + payload.len() as u64;
                if size > max as u64 {
                    return Err(too_long(size, max));
                }
                fragments.joined.extend_from_slice(&payload);
                fragments.check_text()?;
                None
            }
            (opcode, Some(_)) => {
                let data = match opcode {
                    OP_TEXT => Data::Text,
                    OP_BINARY => Data::Binary,
                    other => Data::Reserved(other),
                };
                return Err(WsError::Protocol(ProtocolError::ExpectedFragment(data)));
            }
            (OP_TEXT, None) => Some((true, payload)),
            (OP_BINARY, None) => Some((false, payload)),
            (other, None) => return Err(WsError::Protocol(ProtocolError::UnknownDataFrameType(other))),
        };
        match (started, header.fin) {
            (None, false) => Ok(None),
            (None, true) => match self.fragments.take() {
                Some(Fragments { text, joined, .. }) => message(text, joined).map(Some),
                None => Ok(None),
            },
            (Some((text, payload)), true) => message(text, payload).map(Some),
            (Some((text, joined)), false) => {
                let mut fragments = Fragments { text, joined, checked: 0 };
                fragments.check_text()?;
                self.fragments = Some(fragments);
                Ok(None)
            }
        }
    }

    /// Queues a pong (replacing one not sent yet) or the close reply.
    fn set_reply(&mut self, opcode: u8, payload: Vec<u8>) {
        if self.reply.as_ref().is_none_or(|reply| reply.opcode == OP_PONG) {
            self.reply = Some(Reply { opcode, payload });
        }
    }

    /// Moves the owed reply into the output; once the client closed, the
    /// server ends the connection after writing it (as it should: the
    /// server closes the TCP connection first).
    fn queue_reply(&mut self) -> bool {
        if let Some(reply) = self.reply.take() {
            put_frame(&mut self.output, reply.opcode, &reply.payload);
        }
        !self.state.can_read()
    }

    /// Writes out everything in the output.
    fn poll_write_out(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.written < self.output.len() {
            let written = ready!(Pin::new(&mut self.io).poll_write(cx, &self.output[self.written..]))?;
            if written == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.written += written;
        }
        self.output.clear();
        self.written = 0;
        if self.output.capacity() > KEEP_CAPACITY {
            self.output = Vec::new();
        }
        Poll::Ready(Ok(()))
    }

    /// tungstenite's flush: the owed reply, everything written, the
    /// stream flushed; a server whose client closed then ends.
    fn poll_flush_all(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), WsError>> {
        if self.state == State::Terminated {
            return Poll::Ready(Err(WsError::AlreadyClosed));
        }
        let ending = self.queue_reply();
        ready!(self.poll_write_out(cx)).map_err(|err| self.io_error(err))?;
        if ending {
            self.state = State::Terminated;
            return Poll::Ready(Err(WsError::ConnectionClosed));
        }
        ready!(Pin::new(&mut self.io).poll_flush(cx)).map_err(|err| self.io_error(err))?;
        self.reply_unflushed = false;
        Poll::Ready(Ok(()))
    }

    fn poll_read_message(&mut self, cx: &mut Context<'_>) -> Poll<Result<Message, WsError>> {
        if self.state == State::Terminated {
            return Poll::Ready(Err(WsError::AlreadyClosed));
        }
        loop {
            if self.reply.is_some() || self.reply_unflushed {
                // Pongs and the close reply go out even while only reading.
                match self.poll_flush_all(cx) {
                    Poll::Ready(Ok(())) => {}
                    Poll::Ready(Err(err)) => return Poll::Ready(Err(err)),
                    Poll::Pending => self.reply_unflushed = true,
                }
            } else if !self.state.can_read() {
                self.state = State::Terminated;
                return Poll::Ready(Err(WsError::ConnectionClosed));
            }
            if let Some(message) = ready!(self.poll_frame_message(cx))? {
                return Poll::Ready(Ok(message));
            }
        }
    }

    /// Ready when more frames may be queued (`Sink::poll_ready`).
    pub(crate) fn poll_room(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), WsError>> {
        if self.output.len() - self.written > WRITE_HIGH {
            ready!(self.poll_write_out(cx)).map_err(|err| self.io_error(err))?;
        }
        Poll::Ready(Ok(()))
    }

    /// The common case without the general machinery: a whole, final,
    /// masked text frame already in the buffer of an open connection that
    /// owes nothing. Its masking key, header size and end in the buffer;
    /// `None` sends the caller down the general path.
    fn text_at_hand(&self) -> Option<([u8; 4], usize, usize)> {
        if self.ended || self.state != State::Active || self.reply.is_some() || self.reply_unflushed {
            return None;
        }
        if self.header.is_some() || self.fragments.is_some() {
            return None;
        }
        let (header, size) = parse_header(&self.input)?;
        let key = header.mask?;
        if !header.fin || header.reserved || header.opcode != OP_TEXT || header.length > self.max_message_size as u64 {
            return None;
        }
        let end = size.checked_add(header.length as usize)?;
        (self.input.len() >= end).then_some((key, size, end))
    }

    /// The text frame at hand (see [`ServerFrames::text_at_hand`]) as a
    /// message sharing the input buffer.
    fn whole_text_at_hand(&mut self) -> Option<Result<Message, WsError>> {
        let (key, size, end) = self.text_at_hand()?;
        let mut payload = self.input.split_to(end);
        payload.advance(size);
        if unmask(&mut payload, key) {
            // SAFETY: ASCII is UTF-8.
            return Some(Ok(Message::Text(unsafe { Utf8Bytes::from_bytes_unchecked(payload.freeze()) })));
        }
        Some(message(true, payload))
    }

    /// The text frame at hand (see [`ServerFrames::text_at_hand`]) for a
    /// reader that keeps its own buffer: the text, unmasked, replaces the
    /// contents of `text` (a copy of a short message costs less than
    /// sharing the input buffer with it). `None`: take the general path.
    pub(crate) fn take_text(&mut self, text: &mut Vec<u8>) -> Option<Result<(), WsError>> {
        let (key, size, end) = self.text_at_hand()?;
        text.clear();
        text.extend_from_slice(&self.input[size..end]);
        self.input.advance(end);
        if unmask(text, key) {
            return Some(Ok(()));
        }
        if let Err(err) = std::str::from_utf8(text) {
            self.ended = true;
            return Some(Err(err.into()));
        }
        Some(Ok(()))
    }

    /// Queues one text frame whose payload the caller knows is UTF-8
    /// (`start_send` of a `Message::Text`, without making one).
    pub(crate) fn send_text(&mut self, text: &[u8]) -> Result<(), WsError> {
        self.check_writable()?;
        self.queue_reply();
        put_frame(&mut self.output, OP_TEXT, text);
        Ok(())
    }

    /// An I/O error as tungstenite reports it: a reset once the client's
    /// close frame came is the connection closing, not a failure.
    fn io_error(&self, err: io::Error) -> WsError {
        if !self.state.can_read() && err.kind() == io::ErrorKind::ConnectionReset {
            WsError::ConnectionClosed
        } else {
            WsError::Io(err)
        }
    }

    fn check_writable(&self) -> Result<(), WsError> {
        match self.state {
            State::Terminated => Err(WsError::AlreadyClosed),
            State::Active => Ok(()),
            _ => Err(WsError::Protocol(ProtocolError::SendAfterClosing)),
        }
    }
}

/// A fragmented message being received.
struct Fragments {
    text: bool,
    joined: BytesMut,
    /// Bytes of text already known to be UTF-8.
    checked: usize,
}

impl Fragments {
    /// Fails text as soon as it cannot be UTF-8 (as tungstenite does), not
    /// only once whole; a character cut at the end of a fragment waits
    /// for the next one.
    fn check_text(&mut self) -> Result<(), WsError> {
        if !self.text {
            return Ok(());
        }
        match std::str::from_utf8(&self.joined[self.checked..]) {
            Ok(_) => self.checked = self.joined.len(),
            Err(err) if err.error_len().is_none() => self.checked += err.valid_up_to(),
            Err(err) => return Err(err.into()),
        }
        Ok(())
    }
}

/// A whole message from its payload. Text must be UTF-8; JSON-RPC text
/// is mostly ASCII, which is checked faster.
fn message(text: bool, payload: BytesMut) -> Result<Message, WsError> {
    let payload = payload.freeze();
    if !text {
        return Ok(Message::Binary(payload));
    }
    if payload.is_ascii() {
        // SAFETY: ASCII is UTF-8.
        return Ok(Message::Text(unsafe { Utf8Bytes::from_bytes_unchecked(payload) }));
    }
    Ok(Message::Text(Utf8Bytes::try_from(payload)?))
}

impl<S: AsyncRead + AsyncWrite + Unpin> Stream for ServerFrames<S> {
    type Item = Result<Message, WsError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.ended {
            return Poll::Ready(None);
        }
        if let Some(whole) = self.whole_text_at_hand() {
            self.ended = whole.is_err();
            return Poll::Ready(Some(whole));
        }
        match ready!(self.poll_read_message(cx)) {
            Ok(message) => Poll::Ready(Some(Ok(message))),
            Err(err) => {
                self.ended = true;
                match err {
                    WsError::ConnectionClosed | WsError::AlreadyClosed => Poll::Ready(None),
                    err => Poll::Ready(Some(Err(err))),
                }
            }
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> Sink<Message> for ServerFrames<S> {
    type Error = WsError;

    fn poll_ready(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), WsError>> {
        self.poll_room(cx)
    }

    fn start_send(mut self: Pin<&mut Self>, message: Message) -> Result<(), WsError> {
        let this = &mut *self;
        this.check_writable()?;
        // An owed pong goes out before what follows it.
        this.queue_reply();
        match message {
            Message::Text(text) => put_frame(&mut this.output, OP_TEXT, text.as_bytes()),
            Message::Binary(data) => put_frame(&mut this.output, OP_BINARY, &data),
            Message::Ping(data) => put_frame(&mut this.output, OP_PING, &data),
            Message::Pong(data) => put_frame(&mut this.output, OP_PONG, &data),
            Message::Close(close) => {
                this.state = State::ClosedByUs;
                put_frame(&mut this.output, OP_CLOSE, &close_payload(close.as_ref()));
            }
            Message::Frame(_) => {
                return Err(WsError::Io(io::Error::new(io::ErrorKind::Unsupported, "raw frames are not sent")))
            }
        }
        Ok(())
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), WsError>> {
        self.poll_flush_all(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), WsError>> {
        if self.state == State::Active {
            self.as_mut().start_send(Message::Close(None))?;
        }
        match ready!(self.poll_flush_all(cx)) {
            Ok(()) | Err(WsError::ConnectionClosed) => Poll::Ready(Ok(())),
            Err(err) => Poll::Ready(Err(err)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::{SinkExt, StreamExt};
    use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

    /// A client frame: masked, as clients must send them.
    fn client_frame(first: u8, payload: &[u8]) -> Vec<u8> {
        let key = [0x37, 0xfa, 0x21, 0x3d];
        let mut frame = vec![first];
        match payload.len() {
            short @ 0..=125 => frame.push(0x80 | short as u8),
            long @ 126..=0xFFFF => {
                frame.push(0x80 | 126);
                frame.extend_from_slice(&(long as u16).to_be_bytes());
            }
            long => {
                frame.push(0x80 | 127);
                frame.extend_from_slice(&(long as u64).to_be_bytes());
            }
        }
        frame.extend_from_slice(&key);
        frame.extend(payload.iter().zip(key.iter().cycle()).map(|(byte, key)| byte ^ key));
        frame
    }

    fn server(max: usize) -> (ServerFrames<DuplexStream>, DuplexStream) {
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        (ServerFrames::new(ours, max), theirs)
    }

    async fn read_some(client: &mut DuplexStream) -> Vec<u8> {
        let mut buf = vec![0; 4096];
        let n = client.read(&mut buf).await.unwrap();
        buf.truncate(n);
        buf
    }

    #[tokio::test]
    async fn fragments_are_joined_around_a_ping_which_is_answered() {
        let (mut ws, mut client) = server(1024);
        let mut input = client_frame(OP_TEXT, b"{\"a\":");
        input.extend(client_frame(0x80 | OP_PING, b"hi"));
        input.extend(client_frame(0x80 | OP_CONTINUE, "\"\u{e9}\"}".as_bytes()));
        client.write_all(&input).await.unwrap();
        assert_eq!(ws.next().await.unwrap().unwrap(), Message::Ping("hi".into()));
        assert_eq!(ws.next().await.unwrap().unwrap(), Message::text("{\"a\":\"\u{e9}\"}"));
        assert_eq!(read_some(&mut client).await, [0x8A, 2, b'h', b'i'], "the pong");
    }

    #[tokio::test]
    async fn messages_are_sent_as_unmasked_frames_with_the_right_length_encoding() {
        let (mut ws, mut client) = server(1 << 20);
        ws.send(Message::text("ok")).await.unwrap();
        assert_eq!(read_some(&mut client).await, [0x81, 2, b'o', b'k']);
        let long = "x".repeat(300);
        ws.send(Message::text(long.clone())).await.unwrap();
        let mut frame = vec![0; 304];
        client.read_exact(&mut frame).await.unwrap();
        assert_eq!(frame[..4], [0x81, 126, 1, 44]);
        assert_eq!(&frame[4..], long.as_bytes());
    }

    #[tokio::test]
    async fn the_close_handshake_is_answered_then_the_stream_ends() {
        let (mut ws, mut client) = server(1024);
        client.write_all(&client_frame(0x80 | OP_CLOSE, &[0x03, 0xE8, b'b', b'y', b'e'])).await.unwrap();
        let close = CloseFrame { code: CloseCode::Normal, reason: "bye".into() };
        assert_eq!(ws.next().await.unwrap().unwrap(), Message::Close(Some(close)));
        assert!(ws.next().await.is_none());
        assert_eq!(read_some(&mut client).await, [0x88, 5, 0x03, 0xE8, b'b', b'y', b'e']);
        assert!(matches!(ws.send(Message::text("late")).await, Err(WsError::AlreadyClosed)));
    }

    /// What a case expects of the error.
    type Expected = fn(&WsError) -> bool;

    #[tokio::test]
    async fn protocol_violations_fail_the_connection() {
        let cases: [(Vec<u8>, Expected); 6] = [
            // Unmasked.
            (vec![0x81, 1, b'x'], |e| matches!(e, WsError::Protocol(ProtocolError::UnmaskedFrameFromClient))),
            // A reserved bit (no extension was negotiated).
            (client_frame(0xC1, b"x"), |e| matches!(e, WsError::Protocol(ProtocolError::NonZeroReservedBits))),
            (client_frame(0x80, b"x"), |e| matches!(e, WsError::Protocol(ProtocolError::UnexpectedContinueFrame))),
            (client_frame(0x83, b"x"), |e| matches!(e, WsError::Protocol(ProtocolError::InvalidOpcode(3)))),
            (client_frame(OP_PING, b"x"), |e| matches!(e, WsError::Protocol(ProtocolError::FragmentedControlFrame))),
            (client_frame(0x81, &[0xC3, 0x28]), |e| matches!(e, WsError::Utf8(_))),
        ];
        for (input, expected) in cases {
            let (mut ws, mut client) = server(1024);
            client.write_all(&input).await.unwrap();
            let err = ws.next().await.unwrap().unwrap_err();
            assert!(expected(&err), "{input:?}: {err:?}");
            assert!(ws.next().await.is_none(), "ended");
        }
    }

    #[tokio::test]
    async fn a_frame_over_the_limit_is_refused_from_its_header() {
        let (mut ws, mut client) = server(100);
        // Only the header of a 300-byte frame: refused without waiting for more.
        client.write_all(&client_frame(0x81, &[b'x'; 300])[..8]).await.unwrap();
        let err = ws.next().await.unwrap().unwrap_err();
        assert!(matches!(err, WsError::Capacity(CapacityError::MessageTooLong { size: 300, max_size: 100 })), "{err}");
        // Fragments that only together pass it.
        let (mut ws, mut client) = server(100);
        let mut input = client_frame(OP_TEXT, &[b'x'; 60]);
        input.extend(client_frame(0x80 | OP_CONTINUE, &[b'x'; 60]));
        client.write_all(&input).await.unwrap();
        let err = ws.next().await.unwrap().unwrap_err();
        assert!(matches!(err, WsError::Capacity(CapacityError::MessageTooLong { size: 120, .. })), "{err}");
    }

    #[tokio::test]
    async fn the_end_of_input_without_a_close_frame_is_an_error() {
        let (mut ws, client) = server(1024);
        drop(client);
        let err = ws.next().await.unwrap().unwrap_err();
        assert!(matches!(err, WsError::Protocol(ProtocolError::ResetWithoutClosingHandshake)), "{err}");
    }

    #[tokio::test]
    async fn a_text_frame_at_hand_is_copied_out_and_anything_else_left_to_the_general_path() {
        let (mut ws, mut client) = server(1024);
        let mut input = client_frame(0x81, b"plain");
        input.extend(client_frame(0x81, "caf\u{e9}".as_bytes()));
        input.extend(client_frame(0x89, b"ping"));
        input.extend(client_frame(0x81, &[0xC3, 0x28]));
        client.write_all(&input).await.unwrap();
        let mut text = Vec::new();
        // Nothing read yet: the general path reads.
        assert!(ws.take_text(&mut text).is_none());
        assert_eq!(ws.next().await.unwrap().unwrap(), Message::text("plain"));
        assert!(matches!(ws.take_text(&mut text), Some(Ok(()))));
        assert_eq!(text, "caf\u{e9}".as_bytes());
        assert!(ws.take_text(&mut text).is_none(), "a ping");
        assert_eq!(ws.next().await.unwrap().unwrap(), Message::Ping("ping".into()));
        assert!(ws.take_text(&mut text).is_none(), "a pong is owed first");
        assert!(matches!(ws.next().await, Some(Err(WsError::Utf8(_)))));
    }

    #[tokio::test]
    async fn the_read_buffer_gives_back_what_a_large_message_grew_it_by() {
        let (mut ws, mut client) = server(1 << 20);
        let big = vec![b'x'; 600 * 1024];
        let writer = tokio::spawn(async move {
            client.write_all(&client_frame(0x82, &big)).await.unwrap();
            client.write_all(&client_frame(0x81, b"small")).await.unwrap();
            client
        });
        assert!(matches!(ws.next().await, Some(Ok(Message::Binary(data))) if data.len() == 600 * 1024));
        assert_eq!(ws.next().await.unwrap().unwrap(), Message::text("small"));
        let _client = writer.await.unwrap();
        // The next read starts from a small buffer again.
        let _ = ws.poll_fill(&mut Context::from_waker(std::task::Waker::noop()));
        assert!(ws.input.capacity() <= KEEP_CAPACITY, "{}", ws.input.capacity());
    }

    /// What a server made of its input: the messages, then how it ended.
    async fn outcome<W>(mut ws: W) -> (Vec<Message>, String)
    where
        W: Stream<Item = Result<Message, WsError>> + Unpin,
    {
        let mut messages = Vec::new();
        loop {
            match tokio::time::timeout(std::time::Duration::from_secs(5), ws.next()).await {
                Ok(Some(Ok(message))) => messages.push(message),
                Ok(Some(Err(WsError::Utf8(_)))) => return (messages, "utf-8".into()),
                Ok(Some(Err(err))) => return (messages, err.to_string()),
                Ok(None) => return (messages, "end".into()),
                Err(_) => return (messages, "waiting".into()),
            }
        }
    }

    /// Random frame sequences (fragments, control frames, bad opcodes,
    /// reserved bits, unmasked frames, close codes, oversized messages),
    /// fed in random chunks to this framing and to tungstenite's server
    /// role: both must make the same messages of them and end the same way.
    #[tokio::test]
    async fn it_agrees_with_tungstenite_on_random_frame_sequences() {
        use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut random = move |below: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % below
        };
        for case in 0..3000 {
            let mut input = Vec::new();
            let mut open_text = false;
            for _ in 0..1 + random(10) {
                let opcode = [
                    OP_TEXT,
                    OP_TEXT,
                    OP_TEXT,
                    OP_TEXT,
                    OP_TEXT,
                    OP_BINARY,
                    OP_BINARY,
                    OP_CONTINUE,
                    OP_CONTINUE,
                    OP_CONTINUE,
                    OP_PING,
                    OP_PING,
                    OP_PONG,
                    OP_CLOSE,
                    0x3,
                    0xB,
                ][random(16) as usize];
                let fin = if opcode & 0x8 != 0 { random(12) != 0 } else { random(3) != 0 };
                let reserved = if random(30) == 0 { 0x40 } else { 0 };
                let length = [0, 1, 2, 5, 40, 40, 100, 126, 200][random(9) as usize];
                let mut payload: Vec<u8> = (0..length).map(|i| b'a' + (i % 26) as u8).collect();
                match random(12) {
                    // Two-byte characters, whole (UTF-8) or cut (not).
                    0 if length >= 2 => payload[..2].copy_from_slice("\u{e9}".as_bytes()),
                    1 if length >= 1 && !open_text => payload[length - 1] = 0xC3,
                    _ => {}
                }
                if opcode == OP_CLOSE && length >= 2 {
                    let code: u16 = [1000, 1001, 1005, 1012, 2999, 3000, 4999][random(7) as usize];
                    payload[..2].copy_from_slice(&code.to_be_bytes());
                }
                if opcode == OP_TEXT {
                    open_text = !fin;
                }
                let mut frame = client_frame((if fin { 0x80 } else { 0 }) | reserved | opcode, &payload);
                if random(40) == 0 {
                    // Unmasked: drop the mask bit and the key, unmask the payload.
                    let header = frame.len() - payload.len() - 4;
                    frame[1] &= 0x7F;
                    frame.drain(header..header + 4);
                    frame[header..].copy_from_slice(&payload);
                }
                input.extend(frame);
                if opcode == OP_CLOSE && fin && reserved == 0 {
                    // Nothing after a close frame: what tungstenite makes of
                    // it depends on whether writing its close reply would
                    // block (then "received after closing"; otherwise, as
                    // here, the end).
                    break;
                }
            }
            let max = 256;
            let (theirs_io, mut theirs_client) = tokio::io::duplex(1 << 20);
            let config = WebSocketConfig::default().max_message_size(Some(max)).max_frame_size(Some(max));
            let theirs =
                tokio_tungstenite::WebSocketStream::from_raw_socket(theirs_io, Role::Server, Some(config)).await;
            let (ours, mut ours_client) = server(max);
            // The same input to both, in the same random chunks, then the
            // end of input.
            let mut at = 0;
            while at < input.len() {
                let end = (at + 1 + random(64) as usize).min(input.len());
                theirs_client.write_all(&input[at..end]).await.unwrap();
                ours_client.write_all(&input[at..end]).await.unwrap();
                at = end;
            }
            theirs_client.shutdown().await.unwrap();
            ours_client.shutdown().await.unwrap();
            let (theirs, ours) = (outcome(theirs).await, outcome(ours).await);
            assert_eq!(ours, theirs, "case {case}: {input:02x?}");
        }
    }

    #[test]
    fn unmasking_matches_the_bytewise_definition() {
        let key = [1, 2, 3, 4];
        for length in 0..40 {
            let original: Vec<u8> = (0..length as u8).map(|i| i.wrapping_mul(37)).collect();
            let mut payload = original.clone();
            let ascii = unmask(&mut payload, key);
            let expected: Vec<u8> = original.iter().enumerate().map(|(i, byte)| byte ^ key[i % 4]).collect();
            assert_eq!(payload, expected, "length {length}");
            assert_eq!(ascii, expected.is_ascii(), "length {length}");
        }
    }
}
