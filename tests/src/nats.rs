//! A real `nats-server` for the NATS transport's tests: started on a free
//! loopback port (the server picks it), stopped when dropped. Without the
//! binary the test is skipped, or fails under `RPC_REQUIRE_INTEROP=1`
//! (see [`crate::interop`]); `.ci/run` installs Debian's `nats-server`.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A running `nats-server`, killed on drop.
#[derive(Debug)]
pub struct NatsServer {
    child: Child,
    url: String,
    config: PathBuf,
}

impl NatsServer {
    /// Starts a server on a free loopback port, or returns `None` when
    /// the test named `test` is skipped (no `nats-server` on `PATH`).
    pub fn start(test: &str) -> Option<NatsServer> {
        Self::start_with(test, "")
    }

    /// [`NatsServer::start`] with more lines of configuration (for
    /// example `max_payload: 4096`).
    pub fn start_with(test: &str, config: &str) -> Option<NatsServer> {
        if !crate::interop::require(&["nats-server"], test) {
            return None;
        }
        let path = std::env::temp_dir().join(format!("rpc-nats-{}-{test}.conf", std::process::id()));
        std::fs::write(&path, format!("host: 127.0.0.1\nport: -1\n{config}\n"))
            .expect("writing the nats-server config");
        let mut child = Command::new("nats-server")
            .arg("-c")
            .arg(&path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("nats-server starts");
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, rx) = mpsc::channel();
        // Reads the log until the port is known, then keeps draining it so
        // that the server never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(addr) = line.split("Listening for client connections on ").nth(1) {
                    if let Some(tx) = tx.take() {
                        let _ = tx.send(addr.trim().to_owned());
                    }
                }
            }
        });
        let addr = match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(addr) => addr,
            Err(_) => {
                let _ = child.kill();
                panic!("nats-server did not report its port within 20 s");
            }
        };
        Some(NatsServer { child, url: format!("nats://{addr}"), config: path })
    }

    /// Its client URL, `nats://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.config);
    }
}
