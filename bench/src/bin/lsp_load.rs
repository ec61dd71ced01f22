//! Pipelined load on language servers over stdio (`Content-Length`
//! framing), side by side: `lsp_compare.sh` runs it on the
//! `language_server` example and on the same server written with
//! tower-lsp-server (`lsp_tower`).
//!
//! ```text
//! lsp_load [--pairs 1000] [--rounds 5] [--lines 40] NAME=PATH [NAME=PATH ...]
//! ```
//!
//! Each round starts every server once, in turn (the order reversed every
//! other round), and for each: `initialize`, `initialized`, `didOpen` of a
//! document of `--lines` lines (ASCII, `é` and `😀`, so UTF-16 columns differ
//! from bytes and chars; a `TODO` every tenth line), waits for its diagnostics, then
//! pipelines `--pairs` pairs without waiting for any answer: a `didChange`
//! (one incremental edit: the word in one line's slot, after the `😀`,
//! becomes `v<i>`, a word no earlier text had) and a `hover` on that word.
//! A writer thread sends (one write per message, as an editor would), the
//! reader reads every answer; the driver applies the same edits to its own
//! copy. A hover is *ordered* when it answered exactly `` `v<i>`: 1
//! occurrence(s) `` with the word's range, i.e. it saw the text of every
//! change before it and none after; every `publishDiagnostics` is checked
//! against the TODOs of its version's text. Then `shutdown` and `exit`
//! (expecting exit code 0).
//!
//! The server's CPU time is read for the pipelined phase only: the sum of
//! its threads' on-CPU nanoseconds (`/proc/<pid>/task/*/schedstat`, user +
//! system) after `didOpen`'s diagnostics and after the last hover's answer;
//! `/proc/<pid>/stat`'s 10 ms ticks are reported beside it as a check.
//! Reported: CPU per didChange+hover pair (median over rounds), the first
//! server's CPU over each other's (the median of the rounds' ratios, and
//! their range), wall time per pair, and the ordered hovers.
//!
//! `LSP_SERVER_WRAPPER="taskset -c 0"` prefixes each server's command (a
//! wrapper that execs, so that the pid is the server's).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use rpc_bench::stats::{median, range};
use serde_json::{json, Value};

const URI: &str = "file:///bench/document.txt";

struct Options {
    pairs: usize,
    rounds: usize,
    lines: usize,
    servers: Vec<(String, String)>,
}

fn parse_options() -> Options {
    let mut options = Options { pairs: 1000, rounds: 5, lines: 40, servers: Vec::new() };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut number = |name: &str| -> usize {
            args.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{name} needs a number"))
        };
        match arg.as_str() {
            "--pairs" => options.pairs = number("--pairs"),
            "--rounds" => options.rounds = number("--rounds"),
            "--lines" => options.lines = number("--lines"),
            _ => match arg.split_once('=') {
                Some((name, path)) => options.servers.push((name.to_owned(), path.to_owned())),
                None => panic!(
                    "unknown argument `{arg}`; usage: lsp_load [--pairs N] [--rounds R] [--lines L] NAME=PATH..."
                ),
            },
        }
    }
    assert!(!options.servers.is_empty(), "name at least one server: NAME=PATH");
    options
}

/// The driver's copy of the document.
struct Document {
    lines: Vec<String>,
}

impl Document {
    fn new(lines: usize) -> Document {
        let mut text = vec!["header probe alpha beta: the lines below hold one slot each".to_owned()];
        for j in 1..=lines {
            let todo = if j % 10 == 0 { " TODO: check" } else { "" };
            text.push(format!("{j:03} é😀 w alpha beta_{} gamma naïve delta{todo} probe, epsilon", j % 7));
        }
        Document { lines: text }
    }

    fn text(&self) -> String {
        self.lines.join("\n")
    }

    /// The slot of line `line`: the word after `😀 `, as a byte range.
    fn slot(&self, line: usize) -> (usize, usize) {
        let text = &self.lines[line];
        let start = text.find("😀 ").expect("slot marker") + "😀 ".len();
        let end = start + text[start..].find(' ').expect("slot end");
        (start, end)
    }

    /// Replaces the slot of `line` with `word`; returns the UTF-16 columns
    /// of the old slot (the edit's range) and of the new word.
    fn set_slot(&mut self, line: usize, word: &str) -> ((u32, u32), (u32, u32)) {
        let (start, end) = self.slot(line);
        let text = &mut self.lines[line];
        let column = utf16(&text[..start]);
        let old = (column, column + utf16(&text[start..end]));
        text.replace_range(start..end, word);
        (old, (column, column + utf16(word)))
    }

    /// The TODO ranges, as `line:column` (the contract's diagnostics).
    fn todos(&self) -> Vec<(u32, u32)> {
        let mut todos = Vec::new();
        for (n, line) in self.lines.iter().enumerate() {
            todos.extend(line.match_indices("TODO").map(|(at, _)| (n as u32, utf16(&line[..at]))));
        }
        todos
    }
}

fn utf16(text: &str) -> u32 {
    text.encode_utf16().count() as u32
}

fn frame(message: &Value) -> Vec<u8> {
    let body = serde_json::to_vec(message).expect("encode");
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(&body);
    out
}

fn send(stdin: &mut ChildStdin, message: &Value) {
    stdin.write_all(&frame(message)).expect("write to server");
}

/// Reads one framed message; `None` at EOF.
fn receive(stdout: &mut BufReader<ChildStdout>) -> Option<Value> {
    let mut length = None;
    let mut line = String::new();
    loop {
        line.clear();
        if stdout.read_line(&mut line).expect("read header") == 0 {
            return None;
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = Some(value.trim().parse::<usize>().expect("Content-Length value"));
            }
        }
    }
    let mut body = vec![0; length.expect("Content-Length header")];
    stdout.read_exact(&mut body).expect("read body");
    Some(serde_json::from_slice(&body).expect("a JSON message"))
}

/// Reads until the answer to request `id`.
fn answer(stdout: &mut BufReader<ChildStdout>, id: u64) -> Value {
    loop {
        let message = receive(stdout).expect("server closed its stdout");
        if message.get("method").is_none() && message["id"] == json!(id) {
            return message;
        }
    }
}

/// On-CPU time of all the process's threads, from schedstat (ns), and the
/// process's user and system ticks from stat.
fn cpu(pid: u32) -> (Duration, [Duration; 2]) {
    let mut nanos = 0u64;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).expect("read /proc tasks").flatten() {
        if let Ok(stat) = std::fs::read_to_string(task.path().join("schedstat")) {
            nanos += stat.split(' ').next().and_then(|n| n.parse::<u64>().ok()).unwrap_or(0);
        }
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("read /proc stat");
    let fields: Vec<&str> = stat[stat.rfind(')').expect("stat format") + 2..].split(' ').collect();
    let tick = |field: &str| Duration::from_millis(field.parse::<u64>().expect("utime, stime") * 10);
    (Duration::from_nanos(nanos), [tick(fields[11]), tick(fields[12])])
}

struct Run {
    cpu: Duration,
    /// User and system time from stat's ticks.
    ticks: [Duration; 2],
    wall: Duration,
    ordered: usize,
    /// Hovers that answered another version's word (seen a change too
    /// early or too late), by how many changes off.
    off_by: HashMap<i64, usize>,
    diagnostics_ok: usize,
    diagnostics: usize,
}

/// Whether a `publishDiagnostics`' params are the TODOs (their starts) of
/// the text of the version they name.
fn diagnostics_right(params: &Value, expected: &HashMap<u64, Vec<(u32, u32)>>) -> bool {
    let start = |d: &Value| {
        let start = &d["range"]["start"];
        (start["line"].as_u64().unwrap_or(0) as u32, start["character"].as_u64().unwrap_or(0) as u32)
    };
    let seen: Vec<(u32, u32)> = params["diagnostics"].as_array().into_iter().flatten().map(start).collect();
    params["version"].as_u64().and_then(|v| expected.get(&v)) == Some(&seen)
}

fn spawn(path: &str) -> Child {
    let wrapper = std::env::var("LSP_SERVER_WRAPPER").unwrap_or_default();
    let mut words = wrapper.split_whitespace().chain(std::iter::once(path));
    let mut command = Command::new(words.next().expect("a command"));
    command.args(words).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit());
    command.spawn().unwrap_or_else(|e| panic!("start {path}: {e}"))
}

fn run(path: &str, pairs: usize, lines: usize) -> Run {
    let mut child = spawn(path);
    let pid = child.id();
    let mut stdin = child.stdin.take().expect("piped stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));

    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": std::process::id(), "rootUri": null, "capabilities": {}}}),
    );
    let init = answer(&mut stdout, 1);
    assert!(init.get("result").is_some(), "initialize failed: {init}");
    send(&mut stdin, &json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));

    let mut document = Document::new(lines);
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": URI, "languageId": "plaintext", "version": 1, "text": document.text()}}}),
    );
    loop {
        let message = receive(&mut stdout).expect("diagnostics after didOpen");
        if message["method"] == "textDocument/publishDiagnostics" && message["params"]["version"] == 1 {
            break;
        }
    }

    // Every message of the pipelined phase, and what each answer must be.
    let mut messages = Vec::with_capacity(2 * pairs);
    let mut expected_hovers = Vec::with_capacity(pairs);
    let mut expected_todos = HashMap::new();
    for i in 0..pairs {
        let line = 1 + i % lines;
        let word = format!("v{i}");
        let (old, new) = document.set_slot(line, &word);
        let version = i + 2;
        messages.push(frame(&json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": URI, "version": version},
            "contentChanges": [{"range": {"start": {"line": line, "character": old.0},
                "end": {"line": line, "character": old.1}}, "text": word}]}})));
        messages.push(frame(&json!({"jsonrpc": "2.0", "id": 1000 + i, "method": "textDocument/hover", "params": {
            "textDocument": {"uri": URI}, "position": {"line": line, "character": new.0 + 1}}})));
        expected_hovers.push(json!({
            "contents": {"kind": "markdown", "value": format!("`{word}`: 1 occurrence(s)")},
            "range": {"start": {"line": line, "character": new.0}, "end": {"line": line, "character": new.1}}}));
        expected_todos.insert(version as u64, document.todos());
    }

    let (cpu_before, ticks_before) = cpu(pid);
    let start = Instant::now();
    let writer = std::thread::spawn(move || {
        for message in &messages {
            stdin.write_all(message).expect("write to server");
        }
        stdin
    });
    let (mut ordered, mut answered, mut diagnostics, mut diagnostics_ok) = (0, 0, 0, 0);
    let mut off_by = HashMap::new();
    while answered < pairs {
        let message = receive(&mut stdout).expect("server closed its stdout under load");
        if message["method"] == "textDocument/publishDiagnostics" {
            diagnostics += 1;
            diagnostics_ok += usize::from(diagnostics_right(&message["params"], &expected_todos));
        } else if let Some(id) = message["id"].as_u64().filter(|id| (1000..1000 + pairs as u64).contains(id)) {
            let i = (id - 1000) as usize;
            answered += 1;
            let result = &message["result"];
            if *result == expected_hovers[i] {
                ordered += 1;
            } else {
                let seen = result["contents"]["value"].as_str().unwrap_or("");
                let seen_version =
                    seen.strip_prefix("`v").and_then(|s| s.split('`').next()).and_then(|n| n.parse::<i64>().ok());
                *off_by.entry(seen_version.map_or(i64::MIN, |v| v - i as i64)).or_insert(0) += 1;
            }
        }
    }
    let wall = start.elapsed();
    let (cpu_after, ticks_after) = cpu(pid);
    let mut stdin = writer.join().expect("writer thread");

    send(&mut stdin, &json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}));
    loop {
        // Diagnostics still on their way, then the answer.
        let message = receive(&mut stdout).expect("shutdown answer");
        if message["method"] == "textDocument/publishDiagnostics" {
            diagnostics += 1;
            diagnostics_ok += usize::from(diagnostics_right(&message["params"], &expected_todos));
        } else if message["id"] == 2 {
            break;
        }
    }
    send(&mut stdin, &json!({"jsonrpc": "2.0", "method": "exit"}));
    let status = child.wait().expect("wait for server");
    assert!(status.success(), "{path} exited with {status} after shutdown and exit");
    Run {
        cpu: cpu_after - cpu_before,
        ticks: [ticks_after[0] - ticks_before[0], ticks_after[1] - ticks_before[1]],
        wall,
        ordered,
        off_by,
        diagnostics,
        diagnostics_ok,
    }
}

fn main() {
    let options = parse_options();
    let n = options.servers.len();
    let mut runs: Vec<Vec<Run>> = (0..n).map(|_| Vec::new()).collect();
    for round in 0..options.rounds {
        let order: Vec<usize> = if round % 2 == 0 { (0..n).collect() } else { (0..n).rev().collect() };
        for s in order {
            let (name, path) = &options.servers[s];
            let run = run(path, options.pairs, options.lines);
            eprintln!(
                "round {}: {name}: {:.2} µs CPU/pair ({:.0} ms; stat: user {} ms, sys {} ms), {:.2} µs wall/pair, ordered {} of {}{}, diagnostics {} of {} right",
                round + 1,
                run.cpu.as_secs_f64() * 1e6 / options.pairs as f64,
                run.cpu.as_secs_f64() * 1e3,
                run.ticks[0].as_millis(),
                run.ticks[1].as_millis(),
                run.wall.as_secs_f64() * 1e6 / options.pairs as f64,
                run.ordered,
                options.pairs,
                if run.off_by.is_empty() { String::new() } else { format!(" (others by changes off: {:?})", run.off_by) },
                run.diagnostics_ok,
                run.diagnostics,
            );
            runs[s].push(run);
        }
    }

    let per_pair = |run: &Run| run.cpu.as_secs_f64() * 1e6 / options.pairs as f64;
    println!(
        "{} pairs (didChange + hover) pipelined, {} rounds, a document of {} lines\n",
        options.pairs, options.rounds, options.lines
    );
    println!("| server | CPU per pair, median | range | wall per pair, median | ordered hovers | diagnostics right |");
    println!("| --- | ---: | ---: | ---: | --- | ---: |");
    for (s, (name, _)) in options.servers.iter().enumerate() {
        let cpus: Vec<f64> = runs[s].iter().map(per_pair).collect();
        let (lo, hi) = range(&cpus);
        let walls: Vec<f64> = runs[s].iter().map(|r| r.wall.as_secs_f64() * 1e6 / options.pairs as f64).collect();
        let ordered: Vec<String> = runs[s].iter().map(|r| r.ordered.to_string()).collect();
        let ordered = if ordered.iter().all(|o| *o == ordered[0]) {
            format!("{} of {} in every round", ordered[0], options.pairs)
        } else {
            format!("{} of {}", ordered.join(", "), options.pairs)
        };
        let (ok, all) = runs[s].iter().fold((0, 0), |(ok, all), r| (ok + r.diagnostics_ok, all + r.diagnostics));
        println!(
            "| {name} | {:.2} µs | {lo:.2}-{hi:.2} µs | {:.2} µs | {ordered} | {ok} of {all} |",
            median(&cpus),
            median(&walls),
        );
    }
    let (first, _) = &options.servers[0];
    for (s, (name, _)) in options.servers.iter().enumerate().skip(1) {
        let ratios: Vec<f64> = runs[0].iter().zip(&runs[s]).map(|(a, b)| per_pair(a) / per_pair(b)).collect();
        let (lo, hi) = range(&ratios);
        println!("\nCPU {first} / {name}: **{:.2}x** (rounds {lo:.2}x-{hi:.2}x)", median(&ratios));
    }
}
