//! Measuring a server from outside, as an operator would: its resident
//! memory and open file descriptors read from `/proc/<pid>` (Linux only;
//! elsewhere the tests that need them say they were skipped), and the
//! calculator example started on a local TCP port with its pid at hand.

use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// One mebibyte, in kibibytes (the unit of `/proc/<pid>/status`).
pub const MIB: u64 = 1024;

/// Whether `/proc` can be read. Otherwise the test named `test` is skipped
/// and this says so on the terminal (past the harness's output capture).
pub fn procfs(test: &str) -> bool {
    if Path::new("/proc/self/status").exists() {
        return true;
    }
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED {test}: needs /proc (Linux) to measure the server process");
    false
}

/// A field of `/proc/<pid>/status`, in KiB (`VmRSS`: resident now;
/// `VmHWM`: the peak resident so far).
fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc/<pid>/status");
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|value| value.trim().strip_suffix("kB"))
        .and_then(|kib| kib.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// Resident memory now, in KiB.
pub fn rss_kib(pid: u32) -> u64 {
    status_kib(pid, "VmRSS")
}

/// The peak resident memory so far, in KiB.
pub fn peak_rss_kib(pid: u32) -> u64 {
    status_kib(pid, "VmHWM")
}

/// The address space it has reserved, resident or not, in KiB.
pub fn virtual_kib(pid: u32) -> u64 {
    status_kib(pid, "VmSize")
}

/// Open file descriptors.
pub fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).expect("read /proc/<pid>/fd").count()
}

/// Polls `check` every 20 ms until it returns `true` or `limit` passed;
/// returns whether it did.
pub async fn within(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if check() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// What the calculator should do with its stderr.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Stderr {
    /// Collected, to be read with [`TcpCalculator::stderr`].
    Collected,
    /// A pipe nobody reads (once the address is read from it).
    Undrained,
}

/// The calculator example serving TCP on an ephemeral local port.
pub struct TcpCalculator {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Where it serves HTTP, when started with
    /// [`TcpCalculator::spawn_with_http`].
    pub http: Option<SocketAddr>,
    /// Where it serves WebSocket, when started with `--ws`.
    pub ws: Option<SocketAddr>,
    child: Child,
    stderr: Arc<Mutex<Vec<u8>>>,
    _undrained: Option<BufReader<tokio::process::ChildStderr>>,
}

impl TcpCalculator {
    /// Starts it with `--framing framing` and environment `env`.
    pub async fn spawn(framing: &str, env: &[(&str, &str)], stderr: Stderr) -> Self {
        Self::start(Command::new(crate::common::calculator_path()), framing, env, stderr).await
    }

    /// Like [`TcpCalculator::spawn`], with more command-line `args`.
    pub async fn spawn_with_args(framing: &str, args: &[&str], stderr: Stderr) -> Self {
        let mut command = Command::new(crate::common::calculator_path());
        command.args(args);
        Self::start(command, framing, &[], stderr).await
    }

    /// Like [`TcpCalculator::spawn`], also serving HTTP (`--http`) on
    /// another ephemeral port, [`TcpCalculator::http`].
    pub async fn spawn_with_http(stderr: Stderr) -> Self {
        Self::spawn_with_args("ndjson", &["--http", "127.0.0.1:0"], stderr).await
    }

    /// Like [`TcpCalculator::spawn`], with at most `fds` open file
    /// descriptors (set by `sh -c 'ulimit -n'` before it `exec`s the
    /// calculator, so the pid stays the calculator's).
    pub async fn spawn_with_fd_limit(framing: &str, fds: u32, stderr: Stderr) -> Self {
        let mut command = Command::new("sh");
        command.arg("-c").arg(format!(r#"ulimit -n {fds} && exec "$0" "$@""#)).arg(crate::common::calculator_path());
        Self::start(command, framing, &[], stderr).await
    }

    async fn start(mut command: Command, framing: &str, env: &[(&str, &str)], stderr: Stderr) -> Self {
        command
            .args(["--framing", framing, "--tcp", "127.0.0.1:0"])
            .env_remove("RPC_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for (key, value) in env {
            command.env(key, value);
        }
        let wants = |flag: &str| command.as_std().get_args().any(|arg| arg == flag);
        let (wants_http, wants_ws) = (wants("--http"), wants("--ws"));
        let (mut tcp, mut http, mut ws) = (None, None, None);
        let mut child = command.spawn().expect("spawn the calculator");
        let mut reader = BufReader::new(child.stderr.take().expect("piped stderr"));
        let addr = tokio::time::timeout(Duration::from_secs(20), async {
            let mut line = String::new();
            // TCP is bound first, then HTTP (`http://ADDR`) and WebSocket
            // (`ws://ADDR`) if asked.
            loop {
                line.clear();
                assert!(reader.read_line(&mut line).await.expect("read stderr") > 0, "the calculator exited early");
                let Some(addr) = line.trim().strip_prefix("listening on ") else { continue };
                if let Some(addr) = addr.strip_prefix("http://") {
                    http = Some(addr.parse::<SocketAddr>().expect("a socket address"));
                } else if let Some(addr) = addr.strip_prefix("ws://") {
                    ws = Some(addr.parse::<SocketAddr>().expect("a socket address"));
                } else {
                    tcp = Some(addr.parse::<SocketAddr>().expect("a socket address"));
                }
                if let (Some(tcp), true, true) = (tcp, http.is_some() == wants_http, ws.is_some() == wants_ws) {
                    return tcp;
                }
            }
        })
        .await
        .expect("the calculator printed `listening on ADDR`");
        let collected = Arc::new(Mutex::new(Vec::new()));
        let undrained = match stderr {
            Stderr::Undrained => Some(reader),
            Stderr::Collected => {
                let sink = Arc::clone(&collected);
                tokio::spawn(async move {
                    let mut chunk = Vec::new();
                    while matches!(reader.read_until(b'\n', &mut chunk).await, Ok(n) if n > 0) {
                        sink.lock().unwrap().append(&mut chunk);
                    }
                });
                None
            }
        };
        TcpCalculator { addr, http, ws, child, stderr: collected, _undrained: undrained }
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id().expect("the calculator is running")
    }

    /// Kills it (SIGKILL) and waits for it to be gone.
    pub async fn kill(&mut self) {
        self.child.kill().await.expect("kill the calculator");
    }

    /// What it wrote to stderr so far (after the `listening on` line).
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }
}
