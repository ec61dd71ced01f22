//! Unix domain sockets: the calculator's `--unix PATH` in both framings,
//! called by Python's own `socket` module and by our client; the caller's
//! credentials in the connection hook; the connection limit, refusals and
//! graceful shutdown on a `UnixListener`.

use std::path::PathBuf;
use std::time::Duration;

use rpc_runtime::transport::unix::{PeerCredentials, Unix};
use rpc_runtime::{Peer, Refused, Server};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};

use crate::client_support;
use crate::common::{Conn, Wire, HANG_GUARD};

/// A fresh socket path of this test process (Unix socket paths must stay
/// under about 100 bytes, so not under the target directory).
pub fn socket_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rpc-unix-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("make the socket directory");
    let path = dir.join(format!("{name}.sock"));
    let _ = std::fs::remove_file(&path);
    path
}

/// The calculator's router, in process (the `Calc` of the examples is a
/// binary's; this one answers `subtract` only).
#[rpc_runtime::rpc]
pub trait Arith {
    fn subtract(&self, minuend: i64, subtrahend: i64) -> i64;
}

struct Impl;

impl Arith for Impl {
    fn subtract(&self, minuend: i64, subtrahend: i64) -> i64 {
        minuend - subtrahend
    }
}

/// This process's user and group, as the kernel gives them to a peer.
fn own_ids() -> (u32, u32) {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata("/proc/self").expect("/proc/self (Linux)");
    (meta.uid(), meta.gid())
}

#[tokio::test]
async fn the_calculator_serves_a_unix_socket_in_both_framings_to_python_and_to_our_client() {
    let python = tests::interop::require(&["python3"], "the_calculator_serves_a_unix_socket_in_both_framings");
    for wire in Wire::BOTH {
        let path = socket_path(&format!("calculator-{}", wire.arg()));
        let path_text = path.to_str().expect("a UTF-8 path");
        let (mut child, announced) = client_support::spawn_announcing(
            &client_support::calculator(),
            &["--unix", path_text, "--framing", wire.arg()],
            &["listening on unix:"],
        )
        .await;
        assert_eq!(announced[0], path_text);

        // Our client, framed as the server is.
        let peer = Peer::builder().framing(wire.framing()).connect(Unix::new(&path)).await.expect("connect");
        assert_eq!(peer.call::<i64, _>("subtract", [42, 23]).await.expect("subtract"), 19);
        drop(peer);

        // Python's standard library, writing and reading the frames itself.
        if python {
            let frame = match wire {
                Wire::Ndjson => r#"b'{"jsonrpc":"2.0","method":"subtract","params":[7,2],"id":1}\n'"#.to_owned(),
                Wire::ContentLength => {
                    let body = r#"{"jsonrpc":"2.0","method":"subtract","params":[7,2],"id":1}"#;
                    format!(r#"b'Content-Length: {}\r\n\r\n{body}'"#, body.len())
                }
            };
            let script = format!(
                "import socket, sys\n\
                 s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n\
                 s.settimeout(20)\n\
                 s.connect(sys.argv[1])\n\
                 s.sendall({frame})\n\
                 data = b''\n\
                 while b'\"id\":1}}' not in data:\n\
                 \x20   chunk = s.recv(4096)\n\
                 \x20   if not chunk: break\n\
                 \x20   data += chunk\n\
                 print(data.decode())\n"
            );
            let output = tokio::process::Command::new("python3")
                .args(["-c", &script, path_text])
                .output()
                .await
                .expect("run python3");
            let stdout = String::from_utf8_lossy(&output.stdout);
            assert!(output.status.success(), "python3 failed: {}", String::from_utf8_lossy(&output.stderr));
            assert!(stdout.contains(r#""result":5"#), "{wire:?}: {stdout}");
            if wire == Wire::ContentLength {
                assert!(stdout.starts_with("Content-Length: "), "framed answer: {stdout}");
            }
        }

        // SIGTERM: it stops, and takes its socket file with it.
        let pid = child.id().expect("running").to_string();
        let killed = std::process::Command::new("kill").args(["-TERM", &pid]).status().expect("run kill");
        assert!(killed.success());
        let status = tokio::time::timeout(HANG_GUARD, child.wait()).await.expect("exits").expect("wait");
        assert!(status.success(), "{status}");
        assert!(!path.exists(), "the socket file is removed on exit");
    }
}

#[tokio::test]
async fn the_hook_sees_the_callers_credentials_and_may_refuse() {
    let (uid, gid) = own_ids();
    let path = socket_path("credentials");
    let listener = UnixListener::bind(&path).expect("bind");
    let (seen, mut credentials) = tokio::sync::mpsc::unbounded_channel();
    let refuse_next = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let refusing = std::sync::Arc::clone(&refuse_next);
    let server = Server::new(Impl.into_rpc()).on_connect(move |info, cx| {
        assert_eq!(info.transport(), "unix");
        seen.send(info.part::<PeerCredentials>().copied()).ok();
        if refusing.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(Refused::forbidden("not this caller"));
        }
        Ok(cx)
    });
    tokio::spawn(server.serve(listener));

    let peer = Peer::builder().connect(Unix::new(&path)).await.expect("connect");
    assert_eq!(peer.call::<i64, _>("subtract", [3, 1]).await.expect("served"), 2);
    let caller = credentials.recv().await.flatten().expect("credentials in the hook");
    assert_eq!((caller.uid, caller.gid, caller.pid), (uid, gid, Some(std::process::id() as i32)));

    // Refused: the connection is closed unserved.
    refuse_next.store(true, std::sync::atomic::Ordering::SeqCst);
    // (Closed with the request unread, the socket may be reset rather
    // than ended: either way, nothing is answered.)
    let mut refused = UnixStream::connect(&path).await.expect("connect");
    let request = b"{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":[3,1],\"id\":1}\n";
    let _ = refused.write_all(request).await;
    let mut answer = Vec::new();
    let read = tokio::time::timeout(HANG_GUARD, refused.read_to_end(&mut answer)).await.expect("closed in time");
    match read {
        Ok(_) => assert!(answer.is_empty(), "a refused connection gets no answer: {answer:?}"),
        Err(err) => assert_eq!(err.kind(), std::io::ErrorKind::ConnectionReset, "{err}"),
    }
    assert_eq!(credentials.recv().await.flatten().map(|caller| caller.uid), Some(uid));
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn connections_over_the_limit_are_told_why_and_shutdown_waits_for_running_calls() {
    let path = socket_path("limit");
    let listener = UnixListener::bind(&path).expect("bind");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(Server::new(Impl.into_rpc()).max_connections(1).serve(listener).with_graceful_shutdown(
        async move {
            let _ = stopped.await;
        },
    ));
    let (reader, writer) = UnixStream::connect(&path).await.expect("connect").into_split();
    let mut first = Conn::new(reader, writer, Wire::Ndjson);
    let answer = first.call(br#"{"jsonrpc":"2.0","method":"subtract","params":[9,4],"id":1}"#).await;
    assert!(answer.contains(r#""result":5"#), "{answer}");

    let (reader, writer) = UnixStream::connect(&path).await.expect("connect").into_split();
    let mut second = Conn::new(reader, writer, Wire::Ndjson);
    let refusal = second.recv().await;
    assert!(refusal.contains("-32000") && refusal.contains("max_connections"), "{refusal}");
    assert_eq!(second.recv_or_eof().await, None, "closed after the refusal");

    stop.send(()).expect("serving");
    assert_eq!(first.recv_or_eof().await, None, "graceful shutdown closes the connection");
    let served = tokio::time::timeout(Duration::from_secs(10), serving).await.expect("returns");
    served.expect("not panicked").expect("served");
    let _ = std::fs::remove_file(&path);
}
