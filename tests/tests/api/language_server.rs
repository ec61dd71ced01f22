//! The `language_server` example, driven as an editor drives it: the built
//! binary over its stdio, raw `Content-Length` frames, JSON bodies. Its
//! behaviour is a contract (the bench and the interop tests drive it too):
//! the lifecycle and its exit codes, edits in UTF-16 positions, hover,
//! completion, diagnostics, and `languageServer.countWords` with its
//! configuration request, progress and cancellation.
//!
//! The main test pipelines 1,000 incremental edits, each followed by a
//! hover on a word whose count the edit changed, without waiting for
//! anything: every hover must see exactly the edits sent before it
//! (`#[rpc(exclusive)]` on didOpen/didChange/didClose), and every version
//! must have its diagnostics.

use crate::client_support;

use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

/// How long to wait for one message, or for the process to exit (the
/// server answers in milliseconds; this leaves room for a loaded machine).
const PATIENCE: Duration = Duration::from_secs(60);

const URI: &str = "file:///project/notes.txt";

/// The server as a child process, and the messages it wrote.
struct Lsp {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: mpsc::UnboundedReceiver<Value>,
}

/// A request (with an `id`) or a notification; `null` params are left out
/// (JSON-RPC allows only an array or an object there).
fn message(id: Option<u64>, method: &str, params: Value) -> Value {
    let mut message = json!({"jsonrpc": "2.0", "method": method});
    if let Some(id) = id {
        message["id"] = id.into();
    }
    if !params.is_null() {
        message["params"] = params;
    }
    message
}

/// One message in `Content-Length` framing.
fn frame(message: &Value) -> Vec<u8> {
    let body = serde_json::to_vec(message).expect("encode a message");
    [format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes(), body].concat()
}

impl Lsp {
    async fn start() -> Lsp {
        let program = client_support::example("language_server");
        let mut child = Command::new(&program)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|err| panic!("spawn {}: {err}", program.display()));
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, messages) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut stdout = BufReader::new(stdout);
            loop {
                let mut length = None;
                loop {
                    let mut line = String::new();
                    if stdout.read_line(&mut line).await.unwrap_or(0) == 0 {
                        return; // the end of the server's output
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(value) = line.strip_prefix("Content-Length:") {
                        length = Some(value.trim().parse::<usize>().expect("a Content-Length"));
                    }
                }
                let mut body = vec![0; length.expect("a frame without Content-Length")];
                stdout.read_exact(&mut body).await.expect("a whole frame body");
                let message = serde_json::from_slice(&body).expect("a JSON body");
                if sender.send(message).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        Lsp { child, stdin, messages }
    }

    async fn write(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).await.expect("write to the server");
        stdin.flush().await.expect("flush to the server");
    }

    async fn request(&mut self, id: u64, method: &str, params: Value) {
        self.write(&frame(&message(Some(id), method, params))).await;
    }

    async fn notify(&mut self, method: &str, params: Value) {
        self.write(&frame(&message(None, method, params))).await;
    }

    /// Answers the server's request `request` with `result`.
    async fn reply(&mut self, request: &Value, result: Value) {
        self.write(&frame(&json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))).await;
    }

    /// The next message the server wrote; `None` once its output ended.
    async fn next(&mut self) -> Option<Value> {
        tokio::time::timeout(PATIENCE, self.messages.recv()).await.expect("no message from the server within a minute")
    }

    /// The response to request `id`, skipping the notifications before it.
    async fn response(&mut self, id: u64) -> Value {
        loop {
            let message = self.next().await.unwrap_or_else(|| panic!("the server ended without answering {id}"));
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
        }
    }

    async fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.request(id, method, params).await;
        self.response(id).await
    }

    async fn initialize(&mut self, work_done_progress: bool) {
        let capabilities = json!({"window": {"workDoneProgress": work_done_progress}});
        let answer =
            self.call(1, "initialize", json!({"processId": null, "rootUri": null, "capabilities": capabilities})).await;
        assert_eq!(answer["result"]["serverInfo"]["name"], "language_server", "{answer}");
        self.notify("initialized", json!({})).await;
    }

    async fn open(&mut self, text: &str) {
        let document = json!({"uri": URI, "languageId": "plaintext", "version": 1, "text": text});
        self.notify("textDocument/didOpen", json!({"textDocument": document})).await;
    }

    /// Closes stdin, and answers the exit code.
    async fn exit_code(mut self) -> i32 {
        drop(self.stdin.take());
        let status = tokio::time::timeout(PATIENCE, self.child.wait()).await.expect("the server did not exit");
        status.expect("wait for the server").code().expect("an exit code, not a signal")
    }
}

fn at(line: u32, character: u32) -> Value {
    json!({"textDocument": {"uri": URI}, "position": {"line": line, "character": character}})
}

fn range(start: (u32, u32), end: (u32, u32)) -> Value {
    json!({"start": {"line": start.0, "character": start.1}, "end": {"line": end.0, "character": end.1}})
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The test's own copy of the document, as characters: positions are
/// counted here in UTF-16 code units character by character, independently
/// of the server's byte offsets.
struct Doc {
    chars: Vec<char>,
}

impl Doc {
    fn text(&self) -> String {
        self.chars.iter().collect()
    }

    /// The LSP position of character `at`.
    fn position(&self, at: usize) -> Value {
        let before = &self.chars[..at];
        let line_start = before.iter().rposition(|&c| c == '\n').map_or(0, |newline| newline + 1);
        let line = before.iter().filter(|&&c| c == '\n').count();
        let character: usize = before[line_start..].iter().map(|c| c.len_utf16()).sum();
        json!({"line": line, "character": character})
    }

    /// Every word, as its character range.
    fn words(&self) -> Vec<(usize, usize)> {
        let mut words = Vec::new();
        let mut start = None;
        for (at, &c) in self.chars.iter().chain(std::iter::once(&' ')).enumerate() {
            match (is_word_char(c), start) {
                (true, None) => start = Some(at),
                (false, Some(from)) => {
                    words.push((from, at));
                    start = None;
                }
                _ => {}
            }
        }
        words
    }

    fn word(&self, (start, end): (usize, usize)) -> String {
        self.chars[start..end].iter().collect()
    }

    fn count(&self, word: &str) -> usize {
        self.words().into_iter().filter(|&range| self.word(range) == word).count()
    }

    /// Replaces characters `start..end` with `text`; answers the change as
    /// LSP sends it.
    fn replace(&mut self, start: usize, end: usize, text: &str) -> Value {
        let change = json!({"range": {"start": self.position(start), "end": self.position(end)}, "text": text});
        self.chars.splice(start..end, text.chars());
        change
    }
}

/// The words the edits add and remove. `é` is one UTF-16 unit (two bytes),
/// `日本` two units (six bytes); `😀` (two units, four bytes, not a word
/// character) is inserted too, to move the positions after it.
const WORDS: [&str; 6] = ["alpha", "beta", "TODO", "gamma", "naïve", "日本"];

/// A small deterministic generator (no dependency for randomness).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) as usize % n
    }
}

/// One edit of `doc`: the `contentChanges` of a didChange, and the word it
/// added or removed.
fn edit(doc: &mut Doc, rng: &mut Rng, step: usize) -> (Vec<Value>, &'static str) {
    if step % 200 == 199 {
        // Now and then, the whole text, as a change without a range.
        let text = format!("{}\nbeta TODO", doc.text());
        doc.chars = text.chars().collect();
        return (vec![json!({"text": text})], "beta");
    }
    let mut changes = Vec::new();
    let mut word = WORDS[0];
    // Sometimes two changes in one notification, applied in order.
    let count = if rng.below(5) == 0 { 2 } else { 1 };
    for _ in 0..count {
        // Listed words with a separator after them, and one before (or
        // at the start): removing the word and its separator leaves every
        // other word whole.
        let removable: Vec<(usize, usize)> = doc
            .words()
            .into_iter()
            .filter(|&(start, end)| {
                WORDS.contains(&doc.word((start, end)).as_str())
                    && (start == 0 || matches!(doc.chars[start - 1], ' ' | '\n'))
                    && matches!(doc.chars.get(end), Some(' ' | '\n'))
            })
            .collect();
        if !removable.is_empty() && (rng.below(3) == 0 || removable.len() > 300) {
            let (start, end) = removable[rng.below(removable.len())];
            word = WORDS.iter().copied().find(|&listed| listed == doc.word((start, end))).expect("a listed word");
            changes.push(doc.replace(start, end + 1, ""));
        } else {
            // Inserted at the start of a line or after a space, with a
            // separator after it: a whole word.
            let places: Vec<usize> =
                (0..=doc.chars.len()).filter(|&at| at == 0 || matches!(doc.chars[at - 1], ' ' | '\n')).collect();
            let place = places[rng.below(places.len())];
            let separator = if rng.below(4) == 0 { "\n" } else { " " };
            let token = if rng.below(8) == 0 { "😀" } else { WORDS[rng.below(WORDS.len())] };
            if let Some(&listed) = WORDS.iter().find(|&&listed| listed == token) {
                word = listed;
            }
            changes.push(doc.replace(place, place, &format!("{token}{separator}")));
        }
    }
    (changes, word)
}

/// A hover on an occurrence of `word` (or, once it is gone, of any word),
/// with the cursor anywhere in it or just after it; and the answer it must
/// get.
fn hover_on(doc: &Doc, rng: &mut Rng, word: &str) -> (Value, Value) {
    let words = doc.words();
    let mut occurrences: Vec<(usize, usize)> = words.iter().copied().filter(|&range| doc.word(range) == word).collect();
    if occurrences.is_empty() {
        occurrences = words;
    }
    let (start, end) = occurrences[rng.below(occurrences.len())];
    let cursor = start + rng.below(end - start + 1);
    let found = doc.word((start, end));
    let position = doc.position(cursor);
    let params = json!({"textDocument": {"uri": URI}, "position": position});
    let expected = json!({
        "contents": {"kind": "markdown", "value": format!("`{found}`: {} occurrence(s)", doc.count(&found))},
        "range": {"start": doc.position(start), "end": doc.position(end)},
    });
    (params, expected)
}

#[tokio::test]
async fn a_thousand_pipelined_edits_each_seen_by_the_hover_after_it() {
    const EDITS: usize = 1_000;
    let mut lsp = Lsp::start().await;
    lsp.initialize(false).await;
    let mut doc =
        Doc { chars: "é😀 keep alpha, beta\n日本 TODO gamma naïve alpha\nkeep beta_2 x\n".chars().collect() };
    lsp.open(&doc.text()).await;

    // Every message at once, in one write: 1,000 didChange notifications,
    // each followed by a hover; and what each must produce.
    let mut rng = Rng(0x5eed);
    let mut pipeline = Vec::new();
    let mut expected_hovers = Vec::new();
    let mut expected_todos = vec![doc.text().matches("TODO").count()];
    for step in 0..EDITS {
        let (changes, word) = edit(&mut doc, &mut rng, step);
        let version = step + 2;
        let change = json!({"textDocument": {"uri": URI, "version": version}, "contentChanges": changes});
        pipeline.extend(frame(&message(None, "textDocument/didChange", change)));
        let (params, expected) = hover_on(&doc, &mut rng, word);
        pipeline.extend(frame(&message(Some(1_000 + step as u64), "textDocument/hover", params)));
        expected_hovers.push(expected);
        expected_todos.push(doc.text().matches("TODO").count());
    }
    lsp.write(&pipeline).await;

    let mut hovers = vec![Value::Null; EDITS];
    let mut answered = 0;
    let mut versions = Vec::new();
    let mut mismatched_diagnostics = Vec::new();
    while answered < EDITS || versions.len() < EDITS + 1 {
        let message = lsp.next().await.expect("the server ended early");
        if message["method"] == "textDocument/publishDiagnostics" {
            let version = message["params"]["version"].as_u64().expect("a version") as usize;
            let todos = message["params"]["diagnostics"].as_array().expect("diagnostics").len();
            if expected_todos.get(version - 1) != Some(&todos) {
                mismatched_diagnostics.push((version, todos));
            }
            versions.push(version);
        } else if let Some(id) = message["id"].as_u64() {
            assert!(message.get("error").is_none(), "hover {id} failed: {message}");
            hovers[id as usize - 1_000] = message["result"].clone();
            answered += 1;
        }
    }
    let wrong: Vec<String> = (0..EDITS)
        .filter(|&step| hovers[step] != expected_hovers[step])
        .map(|step| format!("after edit {step}: got {}, expected {}", hovers[step], expected_hovers[step]))
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of {EDITS} hovers did not see the edits before them; first:\n{}",
        wrong.len(),
        wrong[..wrong.len().min(5)].join("\n")
    );
    assert_eq!(versions, (1..=EDITS + 1).collect::<Vec<_>>(), "diagnostics for every version, in order");
    assert!(mismatched_diagnostics.is_empty(), "(version, TODOs) not as expected: {mismatched_diagnostics:?}");

    // The server's copy is the test's, whole: it counts as many words.
    lsp.request(2, "workspace/executeCommand", json!({"command": "languageServer.countWords", "arguments": [URI]}))
        .await;
    let configuration = lsp.next().await.expect("a configuration request");
    assert_eq!(configuration["method"], "workspace/configuration", "{configuration}");
    lsp.reply(&configuration, json!([{"delayMs": 0}])).await;
    assert_eq!(lsp.response(2).await["result"], doc.words().len());
    shut_down(lsp).await;
}

/// `shutdown`, then `exit`: exit code 0.
async fn shut_down(mut lsp: Lsp) {
    assert_eq!(lsp.call(99, "shutdown", Value::Null).await["result"], Value::Null);
    lsp.notify("exit", Value::Null).await;
    assert_eq!(lsp.exit_code().await, 0);
}

#[tokio::test]
async fn requests_before_initialize_are_refused_and_notifications_dropped() {
    let mut lsp = Lsp::start().await;
    let refused = lsp.call(7, "textDocument/hover", at(0, 0)).await;
    assert_eq!(refused["error"]["code"], -32002, "{refused}");
    assert!(refused["error"]["message"].as_str().is_some_and(|m| m.contains("textDocument/hover")), "{refused}");
    let refused = lsp.call(8, "shutdown", Value::Null).await;
    assert_eq!(refused["error"]["code"], -32002, "{refused}");
    // Dropped: the document is not open after `initialize`.
    lsp.open("alpha").await;
    lsp.initialize(false).await;
    assert_eq!(lsp.call(9, "textDocument/hover", at(0, 1)).await["result"], Value::Null);
    lsp.open("alpha alpha").await;
    let published = lsp.next().await.expect("diagnostics");
    assert_eq!(published["params"]["version"], 1, "the first diagnostics are the second didOpen's: {published}");
    assert_eq!(
        lsp.call(10, "textDocument/hover", at(0, 1)).await["result"]["contents"]["value"],
        "`alpha`: 2 occurrence(s)"
    );
}

#[tokio::test]
async fn requests_after_shutdown_are_invalid_and_exit_answers_0() {
    let mut lsp = Lsp::start().await;
    lsp.initialize(false).await;
    lsp.open("alpha").await;
    // Pipelined: each is answered before the process exits.
    lsp.request(2, "shutdown", Value::Null).await;
    lsp.request(3, "textDocument/hover", at(0, 1)).await;
    lsp.request(4, "shutdown", Value::Null).await;
    lsp.notify("exit", Value::Null).await;
    assert_eq!(lsp.response(2).await["result"], Value::Null);
    for id in [3, 4] {
        let refused = lsp.response(id).await;
        assert_eq!(refused["error"]["code"], -32600, "{refused}");
        assert!(refused["error"]["message"].as_str().is_some_and(|m| m.contains("shutting down")), "{refused}");
    }
    assert_eq!(lsp.exit_code().await, 0);
}

#[tokio::test]
async fn exit_without_shutdown_answers_1() {
    let mut lsp = Lsp::start().await;
    lsp.initialize(false).await;
    lsp.notify("exit", Value::Null).await;
    // It exits without waiting for stdin to end.
    let status = tokio::time::timeout(PATIENCE, lsp.child.wait()).await.expect("exit ends the process");
    assert_eq!(status.expect("wait").code(), Some(1));
}

#[tokio::test]
async fn exit_after_shutdown_ends_the_process_with_0_while_stdin_is_open() {
    let mut lsp = Lsp::start().await;
    lsp.initialize(false).await;
    assert_eq!(lsp.call(2, "shutdown", Value::Null).await["result"], Value::Null);
    lsp.notify("exit", Value::Null).await;
    let status = tokio::time::timeout(PATIENCE, lsp.child.wait()).await.expect("exit ends the process");
    assert_eq!(status.expect("wait").code(), Some(0));
}

#[tokio::test]
async fn end_of_input_without_shutdown_answers_1() {
    let mut lsp = Lsp::start().await;
    lsp.initialize(false).await;
    assert_eq!(lsp.exit_code().await, 1);
}

#[tokio::test]
async fn hover_answers_the_word_its_count_and_its_utf16_range() {
    let mut lsp = Lsp::start().await;
    lsp.initialize(false).await;
    // UTF-16 columns: `é` 0, `😀` 1-2, `naïve` 4-9 and 10-15, `x` 17.
    lsp.open(
        "é😀 naïve naïve  x
naïve_2",
    )
    .await;
    let hover = |character| at(0, character);
    let cases = [
        (hover(10), Some(("naïve", 2, range((0, 10), (0, 15))))), // at the start
        (hover(12), Some(("naïve", 2, range((0, 10), (0, 15))))), // inside
        (hover(15), Some(("naïve", 2, range((0, 10), (0, 15))))), // just after
        (hover(9), Some(("naïve", 2, range((0, 4), (0, 9))))),
        (hover(1), Some(("é", 1, range((0, 0), (0, 1))))),
        (at(1, 3), Some(("naïve_2", 1, range((1, 0), (1, 7))))),
        (hover(17), Some(("x", 1, range((0, 17), (0, 18))))),
        (hover(16), None), // between two spaces
    ];
    for (id, (params, expected)) in (10..).zip(cases) {
        let answer = lsp.call(id, "textDocument/hover", params.clone()).await;
        let expected = expected.map_or(Value::Null, |(word, count, range)| {
            json!({"contents": {"kind": "markdown", "value": format!("`{word}`: {count} occurrence(s)")}, "range": range})
        });
        assert_eq!(answer["result"], expected, "hover at {params}");
    }
    let unknown = json!({"textDocument": {"uri": "file:///nowhere"}, "position": {"line": 0, "character": 0}});
    assert_eq!(lsp.call(30, "textDocument/hover", unknown).await["result"], Value::Null);
    shut_down(lsp).await;
}

#[tokio::test]
async fn completion_offers_the_document_words_sorted() {
    let mut lsp = Lsp::start().await;
    lsp.initialize(false).await;
    lsp.open("beta alphabet alpha TODO al\n\nalpine, beta al").await;
    let labels = |answer: Value| -> Vec<String> {
        let items = answer["result"].as_array().unwrap_or_else(|| panic!("an array: {answer}")).clone();
        assert!(items.iter().all(|item| item["kind"] == 1), "{items:?}");
        items.iter().map(|item| item["label"].as_str().expect("a label").to_owned()).collect()
    };
    // After `al`: the words starting with it, but `al` itself.
    assert_eq!(labels(lsp.call(2, "textDocument/completion", at(0, 27)).await), ["alpha", "alphabet", "alpine"]);
    // In the middle of `alphabet`, after `alp`.
    assert_eq!(labels(lsp.call(3, "textDocument/completion", at(0, 8)).await), ["alpha", "alphabet", "alpine"]);
    // On the empty line: every distinct word.
    let all = ["TODO", "al", "alpha", "alphabet", "alpine", "beta"];
    assert_eq!(labels(lsp.call(4, "textDocument/completion", at(1, 0)).await), all);
    assert_eq!(labels(lsp.call(5, "textDocument/completion", at(2, 11)).await), ["beta"]);
    shut_down(lsp).await;
}

/// Starts `languageServer.countWords` on a document of `lines` lines of
/// three words each, as request 5.
async fn count_words(lsp: &mut Lsp, lines: usize) {
    lsp.open(&"one two three\n".repeat(lines)).await;
    lsp.request(5, "workspace/executeCommand", json!({"command": "languageServer.countWords", "arguments": [URI]}))
        .await;
}

#[tokio::test]
async fn count_words_asks_the_configuration_reports_progress_and_answers_the_total() {
    let mut lsp = Lsp::start().await;
    lsp.initialize(true).await;
    count_words(&mut lsp, 3).await;
    let mut seen = Vec::new();
    let answer = loop {
        let message = lsp.next().await.expect("the server ended early");
        match message["method"].as_str() {
            Some("workspace/configuration") => {
                assert_eq!(message["params"], json!({"items": [{"section": "languageServer"}]}));
                seen.push("configuration".to_owned());
                lsp.reply(&message, json!([{"delayMs": 1}])).await;
            }
            Some("window/workDoneProgress/create") => {
                let token = message["params"]["token"].as_str().expect("a string token");
                assert!(!token.is_empty(), "{message}");
                seen.push("create".to_owned());
                lsp.reply(&message, Value::Null).await;
            }
            Some("$/progress") => {
                let value = &message["params"]["value"];
                seen.push(match value["kind"].as_str() {
                    Some("begin") => format!("begin {}", value["title"]),
                    Some("report") => format!("report {} {}", value["message"], value["percentage"]),
                    _ => format!("{}", value["kind"]),
                });
            }
            Some(_) => {}
            None => break message,
        }
    };
    assert_eq!(answer["result"], 9, "{answer}");
    let expected = [
        "configuration",
        "create",
        "begin \"Counting words\"",
        "report \"line 1/3\" 33",
        "report \"line 2/3\" 66",
        "report \"line 3/3\" 100",
        "\"end\"",
    ];
    assert_eq!(seen, expected);
    shut_down(lsp).await;
}

#[tokio::test]
async fn count_words_is_cancelled_and_still_ends_its_progress() {
    let mut lsp = Lsp::start().await;
    lsp.initialize(true).await;
    count_words(&mut lsp, 50).await;
    let mut kinds = Vec::new();
    let answer = loop {
        let message = lsp.next().await.expect("the server ended early");
        match message["method"].as_str() {
            Some("workspace/configuration") => lsp.reply(&message, json!([{"delayMs": 200}])).await,
            Some("window/workDoneProgress/create") => lsp.reply(&message, Value::Null).await,
            Some("$/progress") => {
                let kind = message["params"]["value"]["kind"].as_str().expect("a kind").to_owned();
                if kind == "report" && !kinds.contains(&kind) {
                    lsp.notify("$/cancelRequest", json!({"id": 5})).await;
                }
                kinds.push(kind);
            }
            Some(_) => {}
            None => break message,
        }
    };
    assert_eq!(answer["error"]["code"], -32800, "{answer}");
    assert_eq!(kinds.first().map(String::as_str), Some("begin"), "{kinds:?}");
    assert_eq!(kinds.last().map(String::as_str), Some("end"), "{kinds:?}");
    assert!(kinds.iter().any(|kind| kind == "report"), "{kinds:?}");
    // The server goes on serving.
    assert_eq!(
        lsp.call(6, "textDocument/hover", at(0, 1)).await["result"]["contents"]["value"],
        "`one`: 50 occurrence(s)"
    );
    shut_down(lsp).await;
}

#[tokio::test]
async fn count_words_without_progress_and_its_errors() {
    let mut lsp = Lsp::start().await;
    lsp.initialize(false).await;
    count_words(&mut lsp, 2).await;
    let configuration = loop {
        let message = lsp.next().await.expect("the server ended early");
        assert_ne!(message["method"], "window/workDoneProgress/create", "the editor does not show progress");
        if message["method"] == "workspace/configuration" {
            break message;
        }
    };
    lsp.reply(&configuration, json!([null])).await; // the default pause
    let answer = lsp.response(5).await;
    assert_eq!(answer["result"], 6, "{answer}");

    let unknown = lsp.call(6, "workspace/executeCommand", json!({"command": "nope.nothing", "arguments": [URI]})).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert!(unknown["error"]["message"].as_str().is_some_and(|m| m.contains("nope.nothing")), "{unknown}");
    let params = json!({"command": "languageServer.countWords", "arguments": ["file:///nowhere.txt"]});
    let missing = lsp.call(7, "workspace/executeCommand", params).await;
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    assert!(missing["error"]["message"].as_str().is_some_and(|m| m.contains("file:///nowhere.txt")), "{missing}");
    shut_down(lsp).await;
}
