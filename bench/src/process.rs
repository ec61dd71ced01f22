//! A benchmark's server in a process of its own (so that its CPU time can
//! be read apart from the load driver's): started from a command that
//! prints the address it serves on its first stdout line, asked to exit
//! by closing its stdin.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running server process.
pub struct ServerProcess {
    child: Child,
    /// The address it printed.
    pub addr: SocketAddr,
}

impl ServerProcess {
    /// Starts `command` (stdin and stdout piped, stderr inherited) and
    /// reads the address it prints.
    pub fn start(mut command: Command) -> ServerProcess {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start server process");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped stdout")).read_line(&mut line).expect("read address");
        let addr = line.trim().parse().unwrap_or_else(|_| panic!("server printed `{line}`, not an address"));
        ServerProcess { child, addr }
    }

    /// User + system CPU time of the server process so far.
    pub fn cpu_time(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).expect("read /proc stat");
        // Fields after the parenthesised command name; utime and stime are
        // fields 14 and 15 of the whole line.
        let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
        let fields: Vec<&str> = rest.split(' ').collect();
        let ticks: u64 = fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
        Duration::from_secs_f64(ticks as f64 / clock_ticks_per_second())
    }
}

impl ServerProcess {
    /// Its resident set size now, in bytes (`VmRSS` of `/proc/<pid>/status`).
    pub fn rss_bytes(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).expect("read /proc status");
        let kib: u64 = status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS in /proc status");
        kib * 1024
    }

    /// How many file descriptors it has open (entries of `/proc/<pid>/fd`).
    pub fn open_fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.child.id())).map_or(0, Iterator::count)
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        drop(self.child.stdin.take()); // asks it to exit
        let _ = self.child.wait();
    }
}

fn clock_ticks_per_second() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(100.0)
}
