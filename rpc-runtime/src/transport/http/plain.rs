//! The standalone server's own path for plain JSON-RPC `POST`s.
//!
//! Nearly every request a JSON-RPC server sees has one shape: `POST`
//! over HTTP/1.1, a JSON body of a declared `Content-Length`, a `Host`
//! it serves, on a kept-alive connection. hyper reads those the general
//! way (a `Request` with its header map, a body channel between the
//! connection and the service, a `Response` encoded back), which costs
//! more per small call than the whole JSON-RPC call does. Here a
//! connection starts on a loop that parses heads with `httparse` (the
//! parser hyper uses), passes the same checks as [`HttpService`]'s (Host,
//! Origin, JSON content type, body limit), runs the engine on the body
//! where it was read, and writes the answer with the head hyper would
//! write (`content-type`, `content-length`, `date`).
//!
//! Any other request (another method or version, chunked or `Expect`,
//! `Connection` or `Upgrade` headers, a check that refuses, a head that
//! does not parse or is too large) is not answered here: the connection
//! is handed to hyper from that request's first byte on, with what was
//! read and not served, and hyper serves it and the rest of the
//! connection exactly as it serves a connection from the start. So the
//! refusals, WebSocket upgrades, and every part of HTTP/1.1 this loop
//! does not speak stay hyper's.

use std::future::{poll_fn, Future};
use std::io;
use std::mem::MaybeUninit;
use std::pin::{pin, Pin};
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;

use super::serve::Ended;
use super::service::{plain_context, HttpAddrs, HttpService};
use super::watch::{HeadCounts, Watchdog};
use crate::dispatch::signal::Signal;

/// Headers a plain request may have; one with more goes to hyper.
const MAX_HEADERS: usize = 32;
/// The longest head read here; a longer one goes to hyper (which
/// answers 431 past its own limit).
const MAX_HEAD: usize = 16 * 1024;
/// Room kept free in the input buffer for the next read.
const READ_ROOM: usize = 8 * 1024;
/// Input kept between requests; a larger buffer (after a large body) is
/// given back.
const KEEP_INPUT: usize = 64 * 1024;
/// Bytes reserved for an answer beyond its request's length.
const ANSWER_HEADROOM: usize = 64;
/// At most this much of a request's length is reserved for its answer.
const MAX_ANSWER_RESERVE: usize = 64 * 1024;

/// How the plain loop left a connection.
pub(super) enum Plain {
    /// The connection is over.
    Ended(Ended),
    /// A request this loop does not serve: hyper serves the connection
    /// from here, starting with these bytes (read, not served).
    HandOver(Vec<u8>),
}

/// What one look at the input found.
enum Head {
    /// Not a whole head yet.
    Partial,
    /// A request for hyper.
    Other,
    /// A plain request: its head's length and its body's.
    Plain { head: usize, body: usize },
}

/// Serves plain requests on `stream` until the connection ends or a
/// request needs hyper.
pub(super) async fn serve_plain(
    service: &HttpService,
    stream: &mut TcpStream,
    addrs: HttpAddrs,
    drain: &Signal,
    counts: &HeadCounts,
    watchdog: &mut Watchdog,
) -> io::Result<Plain> {
    let inner = service.inner();
    let max_body = inner.max_body();
    let mut input: Vec<u8> = Vec::with_capacity(READ_ROOM);
    // The first byte of `input` not yet served.
    let mut start = 0;
    let mut out: Vec<u8> = Vec::new();
    let mut answer: Vec<u8> = Vec::new();
    let mut date = CachedDate::default();
    let mut raised = pin!(drain.raised());
    let mut listening = false;
    let mut body_timer: Option<Pin<Box<tokio::time::Sleep>>> = None;
    // Whether the request at `start` has had its head counted (its body
    // is still on its way).
    let mut counted = false;
    loop {
        // Answer every whole request at hand.
        let waiting_for_body = loop {
            let (head, body) = match look(&input[start..], service, addrs, max_body) {
                Head::Partial => break false,
                Head::Other => {
                    if !out.is_empty() {
                        stream.write_all(&out).await?;
                    }
                    return Ok(Plain::HandOver(input.split_off(start)));
                }
                Head::Plain { head, body } => (head, body),
            };
            if !counted {
                counts.head_read();
                counted = true;
            }
            let end = start + head + body;
            if input.len() < end {
                break true;
            }
            let message = &input[start + head..end];
            let cx = plain_context(Some(addrs));
            answer.clear();
            answer.reserve(message.len().min(MAX_ANSWER_RESERVE) + ANSWER_HEADROOM);
            if let Some(pending) = inner.server.engine.process(message, &cx, &mut answer) {
                // An async method: the answer comes when it is done. As
                // in hyper, the end of the connection meanwhile means the
                // client went away, and the call is dropped.
                match until_done_or_gone(pending.run(), stream, &mut input, end).await {
                    Some(done) => answer = done,
                    None => return Ok(Plain::Ended(Ended::Closed)),
                }
            }
            write_answer(&mut out, &answer, date.now());
            counts.answered();
            counted = false;
            body_timer = None;
            start = end;
        };
        if !out.is_empty() {
            stream.write_all(&out).await?;
            out.clear();
        }
        if !waiting_for_body && start == input.len() && drain.is_raised() {
            return Ok(Plain::Ended(Ended::Closed));
        }
        // Room for the next read: served bytes dropped, a large buffer
        // given back.
        if start > 0 {
            input.drain(..start);
            start = 0;
        }
        if input.capacity() > KEEP_INPUT && input.len() < KEEP_INPUT / 2 && !waiting_for_body {
            input.shrink_to(KEEP_INPUT / 2);
        }
        // A body grows the buffer as it arrives, not by what its head
        // declares (a head alone must not make the server reserve the
        // body limit).
        input.reserve(READ_ROOM);
        if waiting_for_body && body_timer.is_none() {
            body_timer = Some(Box::pin(tokio::time::sleep(inner.config.body_timeout)));
        }
        let read = poll_fn(|cx| {
            loop {
                match stream.poll_read_ready(cx) {
                    Poll::Ready(Ok(())) => match stream.try_read_buf(&mut input) {
                        Ok(read) => return Poll::Ready(Ok(Read::Bytes(read))),
                        Err(err) if err.kind() == io::ErrorKind::WouldBlock => continue,
                        Err(err) => return Poll::Ready(Err(err)),
                    },
                    Poll::Ready(Err(err)) => return Poll::Ready(Err(err)),
                    Poll::Pending => break,
                }
            }
            if let Some(timer) = &mut body_timer {
                return timer.as_mut().poll(cx).map(|()| Ok(Read::BodyTimedOut));
            }
            // Waiting for a head: a drained server closes the connection
            // (as hyper closes an idle one), and the header timeout runs.
            // Once polled, the drain's waiter stays registered, so later
            // wake-ups only look at its flag.
            if !listening || drain.is_raised() {
                listening = true;
                if raised.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Ok(Read::Drained));
                }
            }
            watchdog.poll_expired(counts, cx).map(|()| Ok(Read::NoHead))
        })
        .await?;
        match read {
            Read::Bytes(0) => return Ok(Plain::Ended(Ended::Closed)),
            Read::Bytes(_) => {}
            Read::Drained => return Ok(Plain::Ended(Ended::Closed)),
            Read::NoHead => return Ok(Plain::Ended(Ended::NoHead)),
            Read::BodyTimedOut => {
                let reason = format!("Request Timeout: the body did not arrive within {:?}", inner.config.body_timeout);
                write_timeout(&mut out, &reason, date.now());
                stream.write_all(&out).await?;
                return Ok(Plain::Ended(Ended::Closed));
            }
        }
    }
}

/// Waits for `call`, reading what arrives meanwhile (the next requests,
/// up to [`KEEP_INPUT`] past `served`) to see the connection end: `None`
/// when it ended or failed before the call was done.
async fn until_done_or_gone<T>(
    call: impl Future<Output = T>,
    stream: &TcpStream,
    input: &mut Vec<u8>,
    served: usize,
) -> Option<T> {
    let mut call = pin!(call);
    poll_fn(|cx| {
        if let Poll::Ready(done) = call.as_mut().poll(cx) {
            return Poll::Ready(Some(done));
        }
        while input.len() - served < KEEP_INPUT {
            match stream.poll_read_ready(cx) {
                Poll::Ready(Ok(())) => {
                    input.reserve(READ_ROOM);
                    match stream.try_read_buf(input) {
                        Ok(0) => return Poll::Ready(None),
                        Ok(_) => {}
                        Err(err) if err.kind() == io::ErrorKind::WouldBlock => {}
                        Err(_) => return Poll::Ready(None),
                    }
                }
                Poll::Ready(Err(_)) => return Poll::Ready(None),
                Poll::Pending => break,
            }
        }
        Poll::Pending
    })
    .await
}

/// What waiting for input ended with.
enum Read {
    Bytes(usize),
    Drained,
    NoHead,
    BodyTimedOut,
}

/// Whether `input` starts with a plain request this loop serves, one for
/// hyper, or not a whole head yet.
fn look(input: &[u8], service: &HttpService, addrs: HttpAddrs, max_body: usize) -> Head {
    if input.is_empty() {
        return Head::Partial;
    }
    // Left uninitialized: the parser writes the headers it finds.
    let mut headers = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut []);
    let head = match request.parse_with_uninit_headers(input, &mut headers) {
        Ok(httparse::Status::Complete(head)) => head,
        Ok(httparse::Status::Partial) if input.len() <= MAX_HEAD => return Head::Partial,
        _ => return Head::Other,
    };
    if request.method != Some("POST") || request.version != Some(1) || !request.path.is_some_and(plain_path) {
        return Head::Other;
    }
    let (mut host, mut origin, mut content_type, mut length) = (None, None, None, None);
    for header in request.headers.iter() {
        let name = header.name.as_bytes();
        let is = |wanted: &[u8]| name.eq_ignore_ascii_case(wanted);
        // The names that matter differ in length, but for `origin` and
        // `expect`.
        let slot = match name.len() {
            4 if is(b"host") => &mut host,
            6 if is(b"origin") => &mut origin,
            12 if is(b"content-type") => &mut content_type,
            14 if is(b"content-length") => {
                if length.is_some() {
                    return Head::Other;
                }
                &mut length
            }
            6 | 7 | 10 | 17 if is(b"expect") || is(b"upgrade") || is(b"connection") || is(b"transfer-encoding") => {
                return Head::Other
            }
            _ => continue,
        };
        // As `HeaderValue::to_str`: visible ASCII (and tabs) only. The
        // parser refused other control bytes, so ASCII is enough to ask.
        if slot.is_none() {
            *slot = Some(
                Some(header.value).filter(|value| value.is_ascii()).and_then(|value| std::str::from_utf8(value).ok()),
            );
        }
    }
    let Some(Some(length)) = length else { return Head::Other };
    let Some(body) = decimal(length) else { return Head::Other };
    let inner = service.inner();
    let passes = matches!(host, Some(Some(_)))
        && inner.host_allowed(host.flatten(), Some(addrs))
        && inner.origin_allowed(origin, host.flatten())
        && super::service::is_json_str(content_type.flatten())
        && body <= max_body;
    if passes {
        Head::Plain { head, body }
    } else {
        Head::Other
    }
}

/// A request target in origin form that `http::Uri` takes as it is.
fn plain_path(path: &str) -> bool {
    path.starts_with('/')
        && path.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=:@%?".contains(&byte))
}

/// A `Content-Length` of digits only (no sign, no list).
fn decimal(value: &str) -> Option<usize> {
    if value.is_empty() || value.len() > 18 || !value.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    value.parse().ok()
}

/// A 200 with the JSON-RPC answer, or a 204 when there is none; the head
/// as hyper writes it.
fn write_answer(out: &mut Vec<u8>, answer: &[u8], date: &[u8]) {
    if answer.is_empty() {
        out.extend_from_slice(b"HTTP/1.1 204 No Content\r\ndate: ");
        out.extend_from_slice(date);
        out.extend_from_slice(b"\r\n\r\n");
        return;
    }
    out.extend_from_slice(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ");
    out.extend_from_slice(itoa::Buffer::new().format(answer.len()).as_bytes());
    out.extend_from_slice(b"\r\ndate: ");
    out.extend_from_slice(date);
    out.extend_from_slice(b"\r\n\r\n");
    out.extend_from_slice(answer);
}

/// The 408 of a body that did not arrive in time; the connection closes
/// after it.
fn write_timeout(out: &mut Vec<u8>, reason: &str, date: &[u8]) {
    let body = format!("{reason}\n");
    out.extend_from_slice(
        b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\ncontent-length: ",
    );
    out.extend_from_slice(itoa::Buffer::new().format(body.len()).as_bytes());
    out.extend_from_slice(b"\r\ndate: ");
    out.extend_from_slice(date);
    out.extend_from_slice(b"\r\n\r\n");
    out.extend_from_slice(body.as_bytes());
}

/// The `date` header's value, formatted once a second.
#[derive(Default)]
struct CachedDate {
    second: u64,
    text: Vec<u8>,
}

impl CachedDate {
    fn now(&mut self) -> &[u8] {
        let now = SystemTime::now();
        let second = now.duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs());
        if second != self.second || self.text.is_empty() {
            self.second = second;
            self.text = httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(second)).into_bytes();
        }
        &self.text
    }
}

/// A connection handed to hyper: what the plain loop read and did not
/// serve comes first, then the socket.
pub(super) struct Rewind {
    prefix: Vec<u8>,
    read: usize,
    stream: TcpStream,
}

impl Rewind {
    pub(super) fn new(prefix: Vec<u8>, stream: TcpStream) -> Self {
        Rewind { prefix, read: 0, stream }
    }
}

impl AsyncRead for Rewind {
    fn poll_read(self: Pin<&mut Self>, cx: &mut TaskContext<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.read < this.prefix.len() {
            let rest = &this.prefix[this.read..];
            let n = rest.len().min(buf.remaining());
            buf.put_slice(&rest[..n]);
            this.read += n;
            if this.read == this.prefix.len() {
                this.prefix = Vec::new();
                this.read = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Rewind {
    fn poll_write(self: Pin<&mut Self>, cx: &mut TaskContext<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::router::Router;
    use crate::transport::server::Server;

    fn service() -> HttpService {
        Server::new(Router::new()).http()
    }

    fn addrs() -> HttpAddrs {
        HttpAddrs { peer: "127.0.0.1:50000".parse().unwrap(), local: "127.0.0.1:8080".parse().unwrap() }
    }

    fn look_at(request: &str) -> &'static str {
        match look(request.as_bytes(), &service(), addrs(), 1000) {
            Head::Partial => "partial",
            Head::Other => "hyper",
            Head::Plain { .. } => "plain",
        }
    }

    const PLAIN: &str =
        "POST / HTTP/1.1\r\nHost: localhost:8080\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";

    #[test]
    fn a_plain_post_is_served_here_with_its_lengths() {
        let Head::Plain { head, body } = look(PLAIN.as_bytes(), &service(), addrs(), 1000) else { panic!("not plain") };
        assert_eq!((head, body), (PLAIN.len() - 2, 2));
        // Header names in any case, a charset, a path with a query.
        assert_eq!(
            look_at("POST /rpc?x=1 HTTP/1.1\r\nhOsT: 127.0.0.1\r\ncontent-type: Application/JSON; charset=utf-8\r\nCONTENT-LENGTH: 0\r\nOrigin: http://127.0.0.1\r\n\r\n"),
            "plain"
        );
    }

    #[test]
    fn a_head_not_whole_yet_is_waited_for_unless_too_long() {
        for cut in [1, 10, PLAIN.len() - 3] {
            assert_eq!(look_at(&PLAIN[..cut]), "partial", "{cut}");
        }
        let long = format!("POST / HTTP/1.1\r\nX-Long: {}", "a".repeat(MAX_HEAD));
        assert_eq!(look_at(&long), "hyper");
    }

    #[test]
    fn every_other_request_goes_to_hyper() {
        let with = |from: &str, to: &str| PLAIN.replacen(from, to, 1);
        let cases = [
            with("POST", "GET"),
            with("HTTP/1.1", "HTTP/1.0"),
            with("POST /", "POST http://localhost:8080/"),
            with("POST /", "POST /a\"b"),
            with("Host: localhost:8080\r\n", ""),
            with("localhost:8080", "evil.example"),
            with("application/json", "text/plain"),
            with("Content-Type: application/json\r\n", ""),
            with("Content-Length: 2", "Content-Length: +2"),
            with("Content-Length: 2", "Content-Length: 2, 2"),
            with("Content-Length: 2", "Content-Length: 1001"),
            with("Content-Length: 2\r\n", ""),
            with("Content-Length: 2\r\n", "Content-Length: 2\r\nContent-Length: 2\r\n"),
            with("Content-Length: 2\r\n", "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n"),
            with("Content-Length: 2\r\n", "Content-Length: 2\r\nExpect: 100-continue\r\n"),
            with("Content-Length: 2\r\n", "Content-Length: 2\r\nConnection: close\r\n"),
            with("Content-Length: 2\r\n", "Content-Length: 2\r\nUpgrade: websocket\r\n"),
            with("Content-Length: 2\r\n", "Content-Length: 2\r\nOrigin: https://evil.example\r\n"),
            with("Content-Length: 2\r\n", "Content-Length: 2\r\nOrigin: http://caf\u{e9}\r\n"),
            with("Host: localhost:8080", "Host: local\u{e9}"),
            with("Host: localhost:8080", "Host: local\u{1}host"),
            with("Host: localhost:8080", "Host: local\u{7f}host"),
            "GARBAGE\r\n\r\n".to_owned(),
            format!("POST / HTTP/1.1\r\n{}\r\n", "X-A: b\r\n".repeat(MAX_HEADERS + 1)),
        ];
        for case in cases {
            assert_eq!(look_at(&case), "hyper", "{case:?}");
        }
    }

    #[test]
    fn answers_have_the_head_hyper_writes() {
        let mut out = Vec::new();
        write_answer(&mut out, br#"{"jsonrpc":"2.0","result":1,"id":1}"#, b"Mon, 30 Nov 2026 23:00:00 GMT");
        write_answer(&mut out, b"", b"Mon, 30 Nov 2026 23:00:00 GMT");
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 35\r\ndate: Mon, 30 Nov 2026 23:00:00 GMT\r\n\r\n{\"jsonrpc\":\"2.0\",\"result\":1,\"id\":1}\
             HTTP/1.1 204 No Content\r\ndate: Mon, 30 Nov 2026 23:00:00 GMT\r\n\r\n"
        );
        let mut date = CachedDate::default();
        let text = String::from_utf8(date.now().to_vec()).unwrap();
        assert!(httpdate::parse_http_date(&text).is_ok(), "{text}");
    }

    #[tokio::test]
    async fn a_rewound_connection_reads_what_was_read_before_then_the_socket() {
        use tokio::io::AsyncReadExt;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
        let (server, _) = listener.accept().await.unwrap();
        client.write_all(b" world").await.unwrap();
        client.shutdown().await.unwrap();
        let mut rewound = Rewind::new(b"hello".to_vec(), server);
        let mut first = [0u8; 3];
        rewound.read_exact(&mut first).await.unwrap();
        let mut rest = Vec::new();
        rewound.read_to_end(&mut rest).await.unwrap();
        assert_eq!([&first[..], &rest].concat(), b"hello world");
    }
}
