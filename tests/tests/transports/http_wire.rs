//! HTTP/1.1 on the wire, over raw sockets: how the standalone server
//! (`Server::http()`) frames, answers and keeps or closes connections for
//! requests sent every way a client may send them (pipelined, split into
//! small writes, chunked, HTTP/1.0, `Expect: 100-continue`, smuggling
//! attempts, malformed heads, invalid `Host`s, half-closed, upgraded).
//! Each test states what any correct HTTP/1.1 server keeps doing; hyper
//! parses every request, and where an answer is hyper's own choice, a
//! comment says so.

use crate::web_support;

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use web_support::*;

/// How long a test waits for the server to close a connection it must close.
const CLOSE_GUARD: Duration = Duration::from_secs(3);

/// A call of `read` with this id (answered `"value of k<id>"`).
fn call(id: u64) -> String {
    format!(r#"{{"jsonrpc":"2.0","method":"read","params":["k{id}"],"id":{id}}}"#)
}

/// The answer to [`call`].
fn answer(id: u64) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "result": format!("value of k{id}"), "id": id})
}

/// `pieces` as a chunked body: one chunk each, then the last chunk.
fn chunked(pieces: &[&str]) -> String {
    let mut body: String = pieces.iter().map(|piece| format!("{:x}\r\n{piece}\r\n", piece.len())).collect();
    body.push_str("0\r\n\r\n");
    body
}

/// One client connection whose bytes the test reads itself; what was read
/// past one response is kept for the next (pipelined answers may arrive
/// in one read).
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    async fn open(addr: SocketAddr) -> Conn {
        let stream = TcpStream::connect(addr).await.expect("connect");
        // Each small write leaves as its own segment.
        stream.set_nodelay(true).expect("nodelay");
        Conn { stream, buf: Vec::new() }
    }

    async fn send(&mut self, bytes: impl AsRef<[u8]>) {
        self.stream.write_all(bytes.as_ref()).await.expect("write");
    }

    /// Reads what arrived into the buffer; false once the server closed
    /// the connection (a reset counts as closed).
    async fn fill(&mut self) -> bool {
        let mut chunk = [0u8; 8192];
        match self.stream.read(&mut chunk).await {
            Ok(0) | Err(_) => false,
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                true
            }
        }
    }

    /// The next response, with its status line.
    async fn reply_line(&mut self) -> (String, Reply) {
        tokio::time::timeout(HANG_GUARD, async {
            loop {
                if let Some(response) = take_response(&mut self.buf) {
                    break response;
                }
                let open = self.fill().await;
                assert!(open, "connection closed before a whole response: {:?}", String::from_utf8_lossy(&self.buf));
            }
        })
        .await
        .expect("a response in time")
    }

    async fn reply(&mut self) -> Reply {
        self.reply_line().await.1
    }

    /// What the server still sends before it closes the connection;
    /// panics if it keeps it open.
    async fn until_closed(&mut self) -> String {
        tokio::time::timeout(CLOSE_GUARD, async { while self.fill().await {} })
            .await
            .expect("the server closes the connection");
        String::from_utf8_lossy(&std::mem::take(&mut self.buf)).into_owned()
    }
}

#[tokio::test]
async fn pipelined_requests_in_one_write_are_all_answered_in_order() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    // The first call is the slowest: its answer must still come first.
    let slow = r#"{"jsonrpc":"2.0","method":"sleep","params":[50],"id":1}"#;
    let notification = r#"{"jsonrpc":"2.0","method":"read","params":["n"]}"#;
    let batch = format!("[{},{}]", call(4), call(5));
    let requests = [slow, &call(2), notification, &batch, &call(6)].map(|body| post_json(addr, body, &[]));
    let mut conn = Conn::open(addr).await;
    conn.send(requests.concat()).await;

    let first = conn.reply().await;
    assert_eq!(first.status, 200);
    assert_eq!(first.json(), json!({"jsonrpc": "2.0", "result": 50, "id": 1}));
    let second = conn.reply().await;
    assert_eq!((second.status, second.json()), (200, answer(2)));
    let notified = conn.reply().await;
    assert_eq!(notified.status, 204);
    assert_eq!(notified.body, "");
    let batched = conn.reply().await;
    assert_eq!(batched.status, 200);
    assert_eq!(batched.json(), json!([answer(4), answer(5)]));
    let last = conn.reply().await;
    assert_eq!((last.status, last.json()), (200, answer(6)));
    assert!(conn.buf.is_empty(), "bytes past the last answer: {:?}", String::from_utf8_lossy(&conn.buf));
}

#[tokio::test]
async fn pipelined_requests_of_every_kind_in_one_write_are_answered_in_order() {
    // Plain JSON POSTs, then a GET and a chunked POST (which hyper serves),
    // then plain POSTs again, all in one write: every answer comes, in the
    // order of the requests, on the one connection.
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let body = call(3);
    let chunked_post = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n{}",
        chunked(&[&body[..10], &body[10..]])
    );
    let get = format!("GET / HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    let requests = [post_json(addr, &call(1), &[]), get, chunked_post, post_json(addr, &call(4), &[])];
    let mut conn = Conn::open(addr).await;
    conn.send(requests.concat()).await;
    let first = conn.reply().await;
    assert_eq!((first.status, first.json()), (200, answer(1)));
    assert_eq!(conn.reply().await.status, 405);
    let third = conn.reply().await;
    assert_eq!((third.status, third.json()), (200, answer(3)));
    let fourth = conn.reply().await;
    assert_eq!((fourth.status, fourth.json()), (200, answer(4)));
    // The connection still serves.
    conn.send(post_json(addr, &call(5), &[])).await;
    let fifth = conn.reply().await;
    assert_eq!((fifth.status, fifth.json()), (200, answer(5)));
}

#[tokio::test]
async fn a_request_split_into_many_small_writes_is_answered() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let mut conn = Conn::open(addr).await;
    for id in [1, 2] {
        let request = post_json(addr, &call(id), &[]);
        let (head, body) = request.split_at(request.find("\r\n\r\n").unwrap() + 4);
        // The head byte by byte...
        for byte in head.bytes() {
            conn.send([byte]).await;
            tokio::task::yield_now().await;
        }
        // ...then the body in three pieces, with pauses between them.
        let third = body.len() / 3;
        for piece in [&body[..third], &body[third..2 * third], &body[2 * third..]] {
            tokio::time::sleep(Duration::from_millis(20)).await;
            conn.send(piece).await;
        }
        let reply = conn.reply().await;
        assert_eq!((reply.status, reply.json()), (200, answer(id)), "request {id} on the same connection");
    }
}

#[tokio::test]
async fn a_body_sent_after_its_head_within_the_body_timeout_is_answered() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default().body_timeout(Duration::from_secs(2))).await;
    let mut conn = Conn::open(addr).await;
    let request = post_json(addr, &call(1), &[]);
    let (head, body) = request.split_at(request.find("\r\n\r\n").unwrap() + 4);
    conn.send(head).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    conn.send(body).await;
    let reply = conn.reply().await;
    assert_eq!((reply.status, reply.json()), (200, answer(1)));
}

#[tokio::test]
async fn a_connection_stays_alive_across_error_statuses() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let mut conn = Conn::open(addr).await;
    conn.send(post_json(addr, &call(1), &[])).await;
    let reply = conn.reply().await;
    assert_eq!((reply.status, reply.json()), (200, answer(1)));

    conn.send(format!("GET / HTTP/1.1\r\nHost: {addr}\r\n\r\n")).await;
    let reply = conn.reply().await;
    assert_eq!(reply.status, 405);
    assert_eq!(reply.header("allow"), Some("POST"));
    assert_eq!(reply.header("connection"), None, "not closing: {:?}", reply.headers);

    // A body the server refuses without reading it: it is skipped, not
    // taken for the next request.
    conn.send(post(addr, &call(99), &["Content-Type: text/plain"])).await;
    let reply = conn.reply().await;
    assert_eq!(reply.status, 415);
    assert!(reply.body.contains("application/json"), "{}", reply.body);

    conn.send(post_json(addr, &call(3), &[])).await;
    let reply = conn.reply().await;
    assert_eq!((reply.status, reply.json()), (200, answer(3)));
}

#[tokio::test]
async fn a_refusal_before_the_body_arrived_is_answered_then_the_connection_closed() {
    // The 415 is decided on the head; the body is still on its way. hyper
    // skips an unread body only when the rest of it is already there;
    // otherwise it answers and closes the connection (without a
    // `Connection: close` in the answer). Reading and dropping the rest
    // and keeping the connection would be correct too.
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let mut conn = Conn::open(addr).await;
    conn.send(format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n{}",
        "x".repeat(100)
    ))
    .await;
    let reply = conn.reply().await;
    assert_eq!(reply.status, 415);
    assert_eq!(reply.header("connection"), None, "{:?}", reply.headers);
    assert_eq!(conn.until_closed().await, "");
}

#[tokio::test]
async fn connection_close_is_answered_then_the_connection_is_closed() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let mut conn = Conn::open(addr).await;
    // A second request in the same write is never answered.
    conn.send(post_json(addr, &call(1), &["Connection: close"]) + &post_json(addr, &call(2), &[])).await;
    let reply = conn.reply().await;
    assert_eq!((reply.status, reply.json()), (200, answer(1)));
    assert_eq!(reply.header("connection"), Some("close"));
    assert_eq!(conn.until_closed().await, "");
}

#[tokio::test]
async fn http_1_0_is_answered_and_closed_unless_it_asks_for_keep_alive() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let request = |id: u64, extra: &str| {
        let body = call(id);
        format!(
            "POST / HTTP/1.0\r\nHost: {addr}\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    let mut conn = Conn::open(addr).await;
    conn.send(request(1, "")).await;
    let (line, reply) = conn.reply_line().await;
    // hyper answers an HTTP/1.0 request in HTTP/1.0. (RFC 9110 §2.5 would
    // rather have a server send the highest 1.x it speaks, HTTP/1.1; a
    // 1.0 client reads either.)
    assert_eq!(line, "HTTP/1.0 200 OK");
    assert_eq!(reply.json(), answer(1));
    assert_eq!(conn.until_closed().await, "");

    let mut conn = Conn::open(addr).await;
    conn.send(request(2, "Connection: keep-alive\r\n")).await;
    let reply = conn.reply().await;
    assert_eq!((reply.status, reply.json()), (200, answer(2)));
    assert_eq!(reply.header("connection"), Some("keep-alive"));
    conn.send(request(3, "")).await;
    let reply = conn.reply().await;
    assert_eq!((reply.status, reply.json()), (200, answer(3)));
    assert_eq!(conn.until_closed().await, "");
}

#[tokio::test]
async fn a_chunked_body_is_read_whole() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let mut conn = Conn::open(addr).await;
    for id in [1, 2] {
        let body = call(id);
        let (first, second) = body.split_at(body.len() / 2);
        conn.send(format!(
            "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n{}",
            chunked(&[first, second])
        ))
        .await;
        let reply = conn.reply().await;
        // The second answer shows the last chunk was read, not left for
        // the next request.
        assert_eq!((reply.status, reply.json()), (200, answer(id)));
    }
}

#[tokio::test]
async fn content_length_with_transfer_encoding_is_read_as_chunked_and_closes_the_connection() {
    // A smuggling attempt: `Content-Length` spans a second request that
    // the chunked framing leaves after the body. RFC 9112 §6.1 lets the
    // server either refuse it (400) or decode it as chunked and close the
    // connection after answering. hyper does the latter (it drops the
    // `Content-Length` and stops keep-alive), in either header order; the
    // smuggled request is never answered.
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let smuggled = post_json(addr, &call(666), &[]);
    let body = chunked(&[&call(1)]) + &smuggled;
    for framing in [
        format!("Content-Length: {}\r\nTransfer-Encoding: chunked\r\n", body.len()),
        format!("Transfer-Encoding: chunked\r\nContent-Length: {}\r\n", body.len()),
    ] {
        let mut conn = Conn::open(addr).await;
        conn.send(format!("POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n{framing}\r\n{body}"))
            .await;
        let reply = conn.reply().await;
        assert_eq!((reply.status, reply.json()), (200, answer(1)), "{framing}");
        assert_eq!(reply.header("connection"), Some("close"), "{framing}");
        assert_eq!(conn.until_closed().await, "", "{framing}");
    }

    // A transfer coding whose last one is not chunked has no framing the
    // server can trust: 400, and closed.
    let mut conn = Conn::open(addr).await;
    conn.send(format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nTransfer-Encoding: gzip\r\n\r\n{body}",
        body.len()
    ))
    .await;
    assert_eq!(conn.reply().await.status, 400);
    assert_eq!(conn.until_closed().await, "");
}

#[tokio::test]
async fn different_content_lengths_are_refused_400_and_close_the_connection() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let body = call(1);
    let next = post_json(addr, &call(666), &[]);
    for lengths in [
        format!("Content-Length: {}\r\nContent-Length: {}\r\n", body.len(), body.len() + next.len()),
        format!("Content-Length: {}, {}\r\n", body.len(), body.len() + next.len()),
    ] {
        let mut conn = Conn::open(addr).await;
        conn.send(format!(
            "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n{lengths}\r\n{body}{next}"
        ))
        .await;
        let reply = conn.reply().await;
        assert_eq!(reply.status, 400, "{lengths}");
        assert_eq!(conn.until_closed().await, "", "{lengths}: nothing after the refusal is a request");
    }
    // The same length twice is one length (RFC 9112 §6.3).
    let mut conn = Conn::open(addr).await;
    let len = body.len();
    conn.send(format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {len}\r\nContent-Length: {len}\r\n\r\n{body}"
    ))
    .await;
    let reply = conn.reply().await;
    assert_eq!((reply.status, reply.json()), (200, answer(1)));
}

#[tokio::test]
async fn a_garbage_request_line_is_answered_400_and_closed() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    for garbage in [
        &b"this is not HTTP\r\n\r\n"[..],
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
        b"POST /\r\n\r\n",
        b"POST / HTTP/1.1 extra\r\n\r\n",
    ] {
        let mut conn = Conn::open(addr).await;
        conn.send(garbage).await;
        let reply = conn.reply().await;
        assert_eq!(reply.status, 400, "{:?}", String::from_utf8_lossy(garbage));
        assert_eq!(conn.until_closed().await, "");
    }
}

#[tokio::test]
async fn a_header_section_over_the_limit_is_answered_431_and_closed() {
    // hyper reads a head into a buffer of at most about 400 KiB (its
    // default `max_buf_size`); a head still incomplete there is answered
    // 431, and the connection closed without reading the rest (the close
    // may reach the client as a reset after the 431).
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let huge = format!("POST / HTTP/1.1\r\nHost: {addr}\r\nX-Big: {}\r\n\r\n", "a".repeat(1 << 20));
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let (mut reader, mut writer) = stream.split();
    // The server stops reading: the write fails once it closed.
    let writing = async {
        let _ = writer.write_all(huge.as_bytes()).await;
    };
    let reading = async {
        let mut seen = Vec::new();
        let mut chunk = [0u8; 8192];
        while let Ok(n @ 1..) = reader.read(&mut chunk).await {
            seen.extend_from_slice(&chunk[..n]);
        }
        seen
    };
    let ((), mut seen) =
        tokio::time::timeout(HANG_GUARD, async { tokio::join!(writing, reading) }).await.expect("closed");
    let (_, reply) = take_response(&mut seen).expect("a whole response");
    assert_eq!(reply.status, 431);
    assert!(seen.is_empty(), "more after the 431: {:?}", String::from_utf8_lossy(&seen));
}

#[tokio::test]
async fn expect_100_continue_is_answered_100_before_the_body_is_sent() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let mut conn = Conn::open(addr).await;
    let request = post_json(addr, &call(1), &["Expect: 100-continue"]);
    let (head, body) = request.split_at(request.find("\r\n\r\n").unwrap() + 4);
    conn.send(head).await;
    let (line, interim) = conn.reply_line().await;
    assert_eq!(line, "HTTP/1.1 100 Continue");
    assert_eq!(interim.body, "");
    conn.send(body).await;
    let reply = conn.reply().await;
    assert_eq!((reply.status, reply.json()), (200, answer(1)));
}

#[tokio::test]
async fn header_names_in_any_case_and_a_json_charset_are_accepted() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let mut conn = Conn::open(addr).await;
    let body = call(1);
    conn.send(format!(
        "POST / HTTP/1.1\r\nhOsT: {addr}\r\ncontent-type: application/json\r\nCONTENT-LENGTH: {}\r\n\r\n{body}",
        body.len()
    ))
    .await;
    let reply = conn.reply().await;
    assert_eq!((reply.status, reply.json()), (200, answer(1)));
    for (id, content_type) in
        [(2, "Content-Type: application/json; charset=utf-8"), (3, "CONTENT-TYPE: Application/JSON;charset=UTF-8")]
    {
        conn.send(post(addr, &call(id), &[content_type])).await;
        let reply = conn.reply().await;
        assert_eq!((reply.status, reply.json()), (200, answer(id)), "{content_type}");
    }
}

#[tokio::test]
async fn answers_carry_a_date_and_an_exact_content_length_and_a_204_has_no_body() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let mut conn = Conn::open(addr).await;
    conn.send(post_json(addr, &call(1), &["Connection: close"])).await;
    let reply = conn.reply().await;
    assert_eq!(reply.status, 200);
    // An IMF-fixdate: `Tue, 15 Nov 1994 08:12:31 GMT`.
    let date = reply.header("date").expect("a date header");
    assert!(date.len() == 29 && date.ends_with(" GMT"), "{date}");
    // The body read by its `Content-Length` is the whole answer, and
    // nothing follows it before the close.
    assert_eq!(reply.header("content-length"), Some(reply.body.len().to_string().as_str()));
    assert_eq!(reply.json(), answer(1));
    assert_eq!(conn.until_closed().await, "");

    let mut conn = Conn::open(addr).await;
    let notification = r#"{"jsonrpc":"2.0","method":"read","params":["n"]}"#;
    conn.send(post_json(addr, notification, &["Connection: close"])).await;
    let reply = conn.reply().await;
    assert_eq!(reply.status, 204);
    assert!(reply.header("date").is_some(), "{:?}", reply.headers);
    // RFC 9110 §8.6: no Content-Length (nor chunked framing) on a 204.
    assert_eq!(reply.header("content-length"), None, "{:?}", reply.headers);
    assert_eq!(reply.header("transfer-encoding"), None, "{:?}", reply.headers);
    assert_eq!(conn.until_closed().await, "", "no body after a 204");
}

#[tokio::test]
async fn a_request_without_host_is_refused_400_as_rfc_9112_says() {
    // RFC 9112 §3.2: an HTTP/1.1 request without Host is 400, whatever
    // the Host check would allow.
    let (server, _) = vault();
    let body = call(1);
    let request =
        format!("POST / HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", body.len());
    for http in [Http::default(), Http::default().allow_any_host()] {
        let (addr, _stop, _task) = serve(&server, http).await;
        let reply = exchange(addr, &request).await;
        assert_eq!(reply.status, 400, "{}", reply.body);
        assert!(reply.body.contains("needs a Host header"), "{}", reply.body);
    }
    // HTTP/1.0 has no such rule: with the Host check off it is answered.
    let (addr, _stop, _task) = serve(&server, Http::default().allow_any_host()).await;
    let request = request.replacen("HTTP/1.1", "HTTP/1.0", 1);
    let reply = exchange(addr, &request).await;
    assert_eq!((reply.status, reply.json()), (200, answer(1)));
}

#[tokio::test]
async fn host_values_that_are_not_one_authority_are_refused_400_never_read_as_loopback() {
    // RFC 9112 §3.2: more than one Host, or one with an invalid value, is
    // 400. Each of these could pass for a loopback name to a careless
    // reading (the name before the first colon, say).
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let body = call(1);
    let post = |target: &str, hosts: &[&str]| {
        let hosts: String = hosts.iter().map(|host| format!("Host: {host}\r\n")).collect();
        format!(
            "POST {target} HTTP/1.1\r\n{hosts}Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    let bad = [
        post("/", &["localhost", "localhost"]),
        post("/", &["localhost", "evil.example"]),
        post("/", &["localhost:80@evil.com"]),
        post("/", &["localhost:evil"]),
        post("/", &["[::1].evil.com"]),
        post("/", &["localhost:1:2"]),
        post("/", &["user@localhost"]),
    ];
    for request in &bad {
        let reply = exchange(addr, request).await;
        assert_eq!(reply.status, 400, "{request}: {}", reply.body);
        assert!(reply.body.contains("Host") || reply.body.contains("authority"), "{}", reply.body);
    }
    // An absolute-form target: its authority is the host (RFC 9112
    // §3.2.2), whatever the Host header says.
    let reply = exchange(addr, &post("http://evil.example/", &["localhost"])).await;
    assert_eq!(reply.status, 403, "{}", reply.body);
    assert!(reply.body.contains("DNS rebinding"), "{}", reply.body);
    let reply = exchange(addr, &post(&format!("http://localhost:{}/", addr.port()), &["evil.example"])).await;
    assert_eq!((reply.status, reply.json()), (200, answer(1)));
    let reply = exchange(addr, &post("http://localhost@evil.example/", &["localhost"])).await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    // The valid spellings of this machine are still served.
    for host in ["localhost".to_owned(), format!("127.0.0.1:{}", addr.port()), format!("[::1]:{}", addr.port())] {
        let reply = exchange(addr, &post("/", &[&host])).await;
        assert_eq!((reply.status, reply.json()), (200, answer(1)), "{host}");
    }
}

#[tokio::test]
async fn a_client_that_half_closes_after_its_request_gets_an_answer_ready_at_once() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let mut conn = Conn::open(addr).await;
    conn.send(post_json(addr, &call(1), &[])).await;
    conn.stream.shutdown().await.unwrap();
    let reply = conn.reply().await;
    assert_eq!((reply.status, reply.json()), (200, answer(1)));
    assert_eq!(conn.until_closed().await, "");

    // A call still running when the client's end of the stream arrives
    // is dropped, its answer never sent: in HTTP the end of the stream in
    // the middle of a request is the client going away (as hyper takes
    // it without its `half_close` option), so a
    // long call is not left running for nobody. Only answers ready at
    // once survive. (RFC 9112 §9.6 would allow answering too.)
    for ms in [0, 50] {
        let mut conn = Conn::open(addr).await;
        conn.send(post_json(addr, &format!(r#"{{"jsonrpc":"2.0","method":"sleep","params":[{ms}],"id":1}}"#), &[]))
            .await;
        conn.stream.shutdown().await.unwrap();
        assert_eq!(conn.until_closed().await, "", "sleep {ms}");
    }
}

#[tokio::test]
async fn a_post_then_a_websocket_upgrade_on_one_connection_switches_protocols() {
    let (server, _) = vault();
    let (addr, _stop, _task) = serve(&server, Http::default()).await;
    let mut conn = Conn::open(addr).await;
    conn.send(post_json(addr, &call(1), &[])).await;
    let reply = conn.reply().await;
    assert_eq!((reply.status, reply.json()), (200, answer(1)));

    conn.send(format!(
        "GET / HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    ))
    .await;
    let (line, reply) = conn.reply_line().await;
    assert_eq!(line, "HTTP/1.1 101 Switching Protocols");
    assert!(
        reply.header("upgrade").is_some_and(|value| value.eq_ignore_ascii_case("websocket")),
        "{:?}",
        reply.headers
    );
    assert!(reply.header("connection").is_some_and(|value| value.eq_ignore_ascii_case("upgrade")));
    // RFC 6455 §1.3's example key and its accept value.
    assert_eq!(reply.header("sec-websocket-accept"), Some("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="));

    // The connection now speaks WebSocket: a masked text frame with a
    // call is answered with a text frame.
    let payload = call(2);
    assert!(payload.len() < 126, "a length that fits the frame's second byte");
    let mask = [0x37, 0xfa, 0x21, 0x3d];
    let mut frame = vec![0x81, 0x80 | payload.len() as u8];
    frame.extend_from_slice(&mask);
    frame.extend(payload.bytes().enumerate().map(|(i, byte)| byte ^ mask[i % 4]));
    conn.send(frame).await;
    let text = tokio::time::timeout(HANG_GUARD, async {
        loop {
            if conn.buf.len() >= 2 {
                assert_eq!(conn.buf[0], 0x81, "a final text frame: {:?}", conn.buf);
                let (start, len) = match conn.buf[1] {
                    126 if conn.buf.len() >= 4 => (4, u16::from_be_bytes([conn.buf[2], conn.buf[3]]) as usize),
                    126 => (usize::MAX, 0),
                    len => (2, len as usize),
                };
                if start != usize::MAX && conn.buf.len() >= start + len {
                    break String::from_utf8(conn.buf[start..start + len].to_vec()).expect("UTF-8 text");
                }
            }
            assert!(conn.fill().await, "closed before the answer frame");
        }
    })
    .await
    .expect("an answer frame in time");
    assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), answer(2));
}
