//! Helpers shared by the end-to-end tests: locating and spawning the
//! calculator example, an independent (strict) implementation of both
//! framings, and connections that speak them over any byte stream.
//!
//! The decoder here is deliberately separate from `rpc_runtime::wire::FrameReader`:
//! the tests check the server's bytes, so they must not trust its own code
//! to read them back.

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use rpc_runtime::Server;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

/// Only a guard against hangs: no test relies on anything finishing within
/// a given time.
pub const HANG_GUARD: Duration = Duration::from_secs(20);

/// The two framings, as the tests speak them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    /// One message per line.
    Ndjson,
    /// `Content-Length: N\r\n\r\n` then N bytes.
    ContentLength,
}

impl Wire {
    /// Both framings, for tests that run over each.
    pub const BOTH: [Wire; 2] = [Wire::Ndjson, Wire::ContentLength];

    /// The calculator's `--framing` value.
    pub fn arg(self) -> &'static str {
        match self {
            Wire::Ndjson => "ndjson",
            Wire::ContentLength => "content-length",
        }
    }

    /// The runtime's framing of the same name.
    pub fn framing(self) -> rpc_runtime::Framing {
        match self {
            Wire::Ndjson => rpc_runtime::Framing::NewlineDelimited,
            Wire::ContentLength => rpc_runtime::Framing::ContentLength,
        }
    }

    /// `message` as one frame. For newline-delimited framing, line breaks
    /// in the text (which JSON only allows as insignificant whitespace)
    /// become spaces so that a multi-line example stays one message.
    pub fn encode(self, message: &[u8]) -> Vec<u8> {
        match self {
            Wire::Ndjson => {
                let mut out: Vec<u8> =
                    message.iter().map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b }).collect();
                out.push(b'\n');
                out
            }
            Wire::ContentLength => {
                let mut out = format!("Content-Length: {}\r\n\r\n", message.len()).into_bytes();
                out.extend_from_slice(message);
                out
            }
        }
    }

    /// Reads one frame written by the server, insisting on the exact shape
    /// the server promises (`...\n` lines; `Content-Length: N\r\n\r\n`
    /// headers and nothing else). `None` at a clean end of stream.
    pub async fn read_frame<R: AsyncBufRead + Unpin>(self, reader: &mut R) -> std::io::Result<Option<Vec<u8>>> {
        let mut line = Vec::new();
        if reader.read_until(b'\n', &mut line).await? == 0 {
            return Ok(None);
        }
        match self {
            Wire::Ndjson => {
                assert_eq!(line.pop(), Some(b'\n'), "stdout ended inside a line: {:?}", String::from_utf8_lossy(&line));
                assert!(!line.contains(&b'\r'), "a response line carries a CR: {:?}", String::from_utf8_lossy(&line));
                Ok(Some(line))
            }
            Wire::ContentLength => {
                let header = String::from_utf8(line).expect("header is UTF-8");
                let length = header
                    .strip_prefix("Content-Length: ")
                    .and_then(|rest| rest.strip_suffix("\r\n"))
                    .and_then(|n| n.parse::<usize>().ok())
                    .unwrap_or_else(|| panic!("expected `Content-Length: N\\r\\n`, got {header:?}"));
                let mut blank = [0u8; 2];
                reader.read_exact(&mut blank).await?;
                assert_eq!(&blank, b"\r\n", "expected the blank line that ends the header");
                let mut body = vec![0u8; length];
                reader.read_exact(&mut body).await?;
                Ok(Some(body))
            }
        }
    }
}

/// Removes the whitespace outside strings: the specification's examples are
/// pretty-printed, the server writes compact JSON.
pub fn compact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !matches!(c, ' ' | '\t' | '\n' | '\r') {
            out.push(c);
        }
    }
    out
}

type BoxRead = Box<dyn AsyncBufRead + Unpin + Send>;
type BoxWrite = Box<dyn AsyncWrite + Unpin + Send>;

/// The client end of one connection to a server.
pub struct Conn {
    reader: BoxRead,
    writer: Option<BoxWrite>,
    wire: Wire,
}

impl Conn {
    /// A connection over `reader`/`writer` speaking `wire`.
    pub fn new(
        reader: impl tokio::io::AsyncRead + Unpin + Send + 'static,
        writer: impl AsyncWrite + Unpin + Send + 'static,
        wire: Wire,
    ) -> Self {
        Conn { reader: Box::new(BufReader::new(reader)), writer: Some(Box::new(writer)), wire }
    }

    /// Sends `message` as one frame.
    pub async fn send(&mut self, message: impl AsRef<[u8]>) {
        let bytes = self.wire.encode(message.as_ref());
        self.send_raw(&bytes).await;
    }

    /// Sends bytes as they are, without framing.
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        let writer = self.writer.as_mut().expect("the connection's input is already closed");
        writer.write_all(bytes).await.expect("write to server");
        writer.flush().await.expect("flush to server");
    }

    /// The next message from the server; panics at end of stream.
    pub async fn recv(&mut self) -> String {
        match self.recv_or_eof().await {
            Some(message) => message,
            None => panic!("the server closed its output instead of answering"),
        }
    }

    /// The next message from the server, or `None` at end of stream.
    pub async fn recv_or_eof(&mut self) -> Option<String> {
        let frame = tokio::time::timeout(HANG_GUARD, self.wire.read_frame(&mut self.reader))
            .await
            .expect("no answer from the server within the hang guard")
            .expect("read from server");
        frame.map(|bytes| String::from_utf8(bytes).expect("responses are UTF-8"))
    }

    /// Sends `message` and returns the next message.
    pub async fn call(&mut self, message: impl AsRef<[u8]>) -> String {
        self.send(message).await;
        self.recv().await
    }

    /// Closes the server's input (end of input for it).
    pub async fn close(&mut self) {
        if let Some(mut writer) = self.writer.take() {
            let _ = writer.shutdown().await;
        }
    }

    /// Everything the server still writes until it closes its output.
    pub async fn rest(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(message) = self.recv_or_eof().await {
            out.push(message);
        }
        out
    }
}

/// Serves `server` in-process over a `tokio::io::duplex` pipe.
pub fn serve_in_process(server: Server, wire: Wire) -> (Conn, tokio::task::JoinHandle<std::io::Result<()>>) {
    let (client, server_end) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_end);
    let server = server.framing(wire.framing());
    let task = tokio::spawn(async move {
        server.serve(rpc_runtime::transport::stream::Stream::new(server_read, server_write)).await
    });
    let (client_read, client_write) = tokio::io::split(client);
    (Conn::new(client_read, client_write, wire), task)
}

/// The calculator over stdio (newline-delimited), logging at `info` into
/// a stderr pipe nobody reads: once the pipe is full, a log line that
/// waited for room would stall the server.
pub struct UndrainedCalculator {
    pub child: tokio::process::Child,
    pub stdin: tokio::process::ChildStdin,
    /// Reads its answers (stdout); sends nothing (write to `stdin`).
    pub conn: Conn,
    _stderr: Option<tokio::process::ChildStderr>,
}

impl UndrainedCalculator {
    pub fn spawn() -> Self {
        let mut child = tokio::process::Command::new(calculator_path())
            .env("RPC_LOG", "info")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped()) // never read
            .kill_on_drop(true)
            .spawn()
            .expect("spawn the calculator");
        let _stderr = child.stderr.take();
        let stdin = child.stdin.take().expect("piped stdin");
        let conn = Conn::new(child.stdout.take().expect("piped stdout"), tokio::io::sink(), Wire::Ndjson);
        UndrainedCalculator { child, stdin, conn, _stderr }
    }
}

/// The calculator example's binary, built once per test process (see
/// `client_support::example`).
pub fn calculator_path() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| crate::client_support::example("calculator"))
}

/// The catalog_diff example's binary, built once per test process.
pub fn catalog_diff_path() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| crate::client_support::example("catalog_diff"))
}

/// A running calculator example process.
pub struct Calculator {
    /// The connection over its stdin/stdout (or the first TCP connection's
    /// framing, for TCP mode).
    pub conn: Conn,
    child: Child,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_task: tokio::task::JoinHandle<()>,
}

/// How a calculator process ended.
pub struct Exit {
    /// Its exit status.
    pub status: ExitStatus,
    /// The messages it wrote after its input was closed.
    pub rest: Vec<String>,
    /// Everything it wrote to stderr.
    pub stderr: String,
}

impl Calculator {
    /// Spawns the calculator serving stdio in `wire` framing.
    pub fn spawn(wire: Wire) -> Self {
        Self::spawn_with_env(wire, &[])
    }

    /// Like [`Calculator::spawn`], with extra environment variables.
    pub fn spawn_with_env(wire: Wire, env: &[(&str, &str)]) -> Self {
        let mut child = Self::command(wire, env).spawn().expect("spawn the calculator");
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (stderr, stderr_task) = collect(BufReader::new(child.stderr.take().expect("piped stderr")));
        Calculator { conn: Conn::new(stdout, stdin, wire), child, stderr, stderr_task }
    }

    /// Spawns the calculator serving TCP on an ephemeral port of 127.0.0.1;
    /// returns it and the address it printed.
    pub async fn spawn_tcp(wire: Wire) -> (Self, std::net::SocketAddr) {
        let mut command = Self::command(wire, &[]);
        command.args(["--tcp", "127.0.0.1:0"]);
        let mut child = command.spawn().expect("spawn the calculator");
        let mut stderr = BufReader::new(child.stderr.take().expect("piped stderr"));
        let addr = tokio::time::timeout(HANG_GUARD, async {
            let mut line = String::new();
            loop {
                line.clear();
                assert!(stderr.read_line(&mut line).await.expect("read stderr") > 0, "calculator exited early");
                if let Some(addr) = line.trim().strip_prefix("listening on ") {
                    return addr.parse::<std::net::SocketAddr>().expect("a socket address");
                }
            }
        })
        .await
        .expect("the calculator printed `listening on ADDR`");
        let (stderr, stderr_task) = collect(stderr);
        // Stdio is unused in TCP mode; keep a connection object for symmetry.
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        (Calculator { conn: Conn::new(stdout, stdin, wire), child, stderr, stderr_task }, addr)
    }

    fn command(wire: Wire, env: &[(&str, &str)]) -> Command {
        let mut command = Command::new(calculator_path());
        command
            .args(["--framing", wire.arg()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env_remove("RPC_LOG")
            .kill_on_drop(true);
        for (key, value) in env {
            command.env(key, value);
        }
        command
    }

    /// Closes stdin, reads what is left on stdout and waits for the exit.
    pub async fn finish(mut self) -> Exit {
        self.conn.close().await;
        let rest = self.conn.rest().await;
        let status = tokio::time::timeout(HANG_GUARD, self.child.wait())
            .await
            .expect("the calculator exits after end of input")
            .expect("wait for the calculator");
        // Stderr closes when the process exits: the collector then ends.
        tokio::time::timeout(HANG_GUARD, &mut self.stderr_task)
            .await
            .expect("stderr closes when the calculator exits")
            .expect("stderr collector");
        let stderr = String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned();
        Exit { status, rest, stderr }
    }
}

fn collect(
    mut stderr: impl AsyncBufRead + Unpin + Send + 'static,
) -> (Arc<Mutex<Vec<u8>>>, tokio::task::JoinHandle<()>) {
    let buffer = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&buffer);
    let task = tokio::spawn(async move {
        let mut chunk = Vec::new();
        loop {
            chunk.clear();
            match stderr.read_until(b'\n', &mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(_) => sink.lock().unwrap().extend_from_slice(&chunk),
            }
        }
    });
    (buffer, task)
}

/// Opens a TCP connection to `addr` speaking `wire`.
pub async fn connect(addr: std::net::SocketAddr, wire: Wire) -> Conn {
    let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let (read, write) = stream.into_split();
    Conn::new(read, write, wire)
}

/// `{"jsonrpc":"2.0","result":<result>,"id":<id>}` as the server writes it.
pub fn result(result: &str, id: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","result":{result},"id":{id}}}"#)
}

/// `{"jsonrpc":"2.0","error":{"code":..,"message":".."},"id":<id>}`.
pub fn error(code: i64, message: &str, id: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","error":{{"code":{code},"message":"{message}"}},"id":{id}}}"#)
}

/// The `-32600 Invalid Request` answer for `id`.
pub fn invalid_request(id: &str) -> String {
    error(-32600, "Invalid Request", id)
}

/// The `-32600 Invalid Request` answer for `id` whose `data` says why.
pub fn invalid_request_because(id: &str, why: &str) -> String {
    let data = serde_json::to_string(why).expect("a string serializes");
    format!(r#"{{"jsonrpc":"2.0","error":{{"code":-32600,"message":"Invalid Request","data":{data}}},"id":{id}}}"#)
}

/// The `-32700 Parse error` answer.
pub fn parse_error() -> String {
    error(-32700, "Parse error", "null")
}
