//! MCP server CPU per request, in process: our `McpServer` beside the same
//! server on rmcp (the official Rust MCP SDK), or our server built on two
//! trees (`--versus`).
//!
//! Each run makes a fresh server on an OS thread of its own, on a
//! current-thread tokio runtime, reading newline-delimited JSON from an
//! in-process duplex pipe (`tokio::io::duplex`, split into halves) as it
//! would read stdio. One driver, on the main thread, serves both: it writes
//! raw NDJSON (`initialize` at 2025-06-18, `notifications/initialized`),
//! then `--warmup` and `--requests` requests of one kind, pipelined in
//! windows of `--window` (the window's requests in one write, then its
//! answers read), and checks every answer: a success with the expected
//! content, each id answered once. The server thread's on-CPU time
//! (`/proc/self/task/<tid>/schedstat`, nanoseconds, as `lsp_load` reads
//! it) over the measured requests, divided by their number, is the figure.
//!
//! Kinds: `echo` (`tools/call` with an 11-byte text), `echo1k` (a 1,024-byte
//! text), `read` (`resources/read notes://7`), `prompt` (`prompts/get
//! summarize {"id":"7"}`), `list` (`tools/list`). `read` and `prompt` need
//! the `features39` feature (our resources and prompts), `rmcp` the `rmcp`
//! feature; with `mcp` alone the same source builds on trees before them.
//!
//! ```text
//! mcp_cpu [--impls ours,rmcp,rmcp-unit] [--kinds echo,echo1k,read,prompt,list]
//!         [--rounds 31] [--requests 5000] [--warmup 1000] [--window 32] [--emit] [--show]
//! mcp_cpu --versus after=target/mcp/mcp_cpu_tools,before=target/mcp/mcp_cpu_before
//!         [--kinds echo,echo1k] [--rounds 31] [--requests N] [--warmup N] [--window N]
//! ```
//!
//! Rounds are interleaved: in each round every kind runs once per
//! implementation, the order of the implementations alternating from one
//! kind and round to the next, so that the machine's load falls on both
//! alike. Reported: the median CPU per request of each, and the median of
//! the rounds' ratios (first implementation over each other) with their
//! quartiles and range. `--versus` runs whole binaries instead (each `--impls ours
//! --rounds 1 --emit`, one process per binary and round, in turns whose
//! order rotates) and reports the same for them.

use std::time::{Duration, Instant};

use rpc_bench::stats::{median, quartiles, range};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

/// The note every `notes://{id}` reads (191 bytes of Markdown).
const NOTE: &str = "# Groceries\n\n\
    - [ ] milk, 2 litres\n\
    - [ ] bread (the dark one)\n\
    - [x] coffee beans\n\n\
    Shop on **Saturday** morning; the market closes at noon.\n\
    See also `notes://8` for the recipes that need them.\n";

/// The first message of the `summarize` prompt; the second is the note.
const INTRO: &str = "Summarize this note in three bullet points:";

/// Our server: an `#[rpc]` trait served by `McpServer`.
mod ours {
    use rpc_runtime::mcp::McpServer;
    #[cfg(feature = "features39")]
    use rpc_runtime::mcp::PromptMessages;
    use rpc_runtime::rpc;
    use rpc_runtime::transport::stream::Stream;
    use tokio::io::DuplexStream;

    /// Notes, for the MCP benchmark.
    #[cfg(feature = "features39")]
    #[rpc]
    pub trait Bench {
        /// Echoes the text.
        fn echo(&self, text: String) -> String;

        /// One note, as Markdown.
        #[rpc(mcp(resource = "notes://{id}", mime_type = "text/markdown"))]
        fn note(&self, id: u64) -> String;

        /// Asks for a summary of a note.
        #[rpc(mcp(prompt))]
        fn summarize(
            &self,
            /// The note's id.
            id: u64,
        ) -> PromptMessages;
    }

    /// Notes, for the MCP benchmark (its tool alone, for trees without
    /// resources and prompts).
    #[cfg(not(feature = "features39"))]
    #[rpc]
    pub trait Bench {
        /// Echoes the text.
        fn echo(&self, text: String) -> String;
    }

    struct Notebook;

    impl Bench for Notebook {
        fn echo(&self, text: String) -> String {
            text
        }

        #[cfg(feature = "features39")]
        fn note(&self, _id: u64) -> String {
            super::NOTE.to_owned()
        }

        #[cfg(feature = "features39")]
        fn summarize(&self, id: u64) -> PromptMessages {
            PromptMessages::new().user(super::INTRO).user(self.note(id))
        }
    }

    pub async fn serve(pipe: DuplexStream) -> std::io::Result<()> {
        let (read, write) = tokio::io::split(pipe);
        McpServer::new(Notebook.into_rpc()).into_server().serve(Stream::new(read, write)).await
    }
}

/// The same server on rmcp, written its way: `#[tool_router]` and
/// `#[tool]` for the tool, the resource and prompt methods of
/// `ServerHandler` by hand.
#[cfg(feature = "rmcp")]
mod theirs {
    use rmcp::handler::server::router::tool::ToolRouter;
    use rmcp::handler::server::wrapper::Parameters;
    use rmcp::model::{
        GetPromptRequestParams, GetPromptResponse, GetPromptResult, ListPromptsResult, ListResourceTemplatesResult,
        ListResourcesResult, PaginatedRequestParams, Prompt, PromptArgument, PromptMessage, ReadResourceRequestParams,
        ReadResourceResponse, ReadResourceResult, ResourceContents, ResourceTemplate, Role, ServerCapabilities,
        ServerConfig,
    };
    use rmcp::service::RequestContext;
    use rmcp::{tool, tool_handler, tool_router, ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
    use tokio::io::DuplexStream;

    /// The echo tool's arguments.
    #[derive(Debug, serde::Deserialize, rmcp::schemars::JsonSchema)]
    #[schemars(crate = "rmcp::schemars")]
    pub struct EchoArgs {
        /// The text to echo.
        text: String,
    }

    /// The router is made once and kept (`#[tool_handler(router = ...)]`):
    /// the README's `#[tool_handler]` alone makes it anew for every
    /// `tools/call` and `tools/list` (`Unit` below, `--impls rmcp-unit`).
    #[derive(Debug, Clone)]
    pub struct Notebook {
        tool_router: ToolRouter<Self>,
    }

    #[tool_router]
    impl Notebook {
        #[tool(description = "Echoes the text.")]
        fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
            text
        }
    }

    impl Notebook {
        fn note(&self, _id: u64) -> String {
            super::NOTE.to_owned()
        }
    }

    #[tool_handler(router = self.tool_router)]
    impl ServerHandler for Notebook {
        fn get_info(&self) -> ServerConfig {
            ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().enable_prompts().build())
                .with_instructions("Notes, for the MCP benchmark.")
        }

        async fn list_resources(
            &self,
            _request: Option<PaginatedRequestParams>,
            _cx: RequestContext<RoleServer>,
        ) -> Result<ListResourcesResult, McpError> {
            Ok(ListResourcesResult::with_all_items(Vec::new()))
        }

        async fn list_resource_templates(
            &self,
            _request: Option<PaginatedRequestParams>,
            _cx: RequestContext<RoleServer>,
        ) -> Result<ListResourceTemplatesResult, McpError> {
            Ok(ListResourceTemplatesResult::with_all_items(vec![ResourceTemplate::new("notes://{id}", "note")
                .with_description("One note, as Markdown.")
                .with_mime_type("text/markdown")]))
        }

        async fn read_resource(
            &self,
            request: ReadResourceRequestParams,
            _cx: RequestContext<RoleServer>,
        ) -> Result<ReadResourceResponse, McpError> {
            let id = request.uri.strip_prefix("notes://").and_then(|id| id.parse::<u64>().ok());
            let Some(id) = id else {
                return Err(McpError::resource_not_found(format!("no resource {}", request.uri), None));
            };
            let contents = ResourceContents::text(self.note(id), request.uri).with_mime_type("text/markdown");
            Ok(ReadResourceResult::new(vec![contents]).into())
        }

        async fn list_prompts(
            &self,
            _request: Option<PaginatedRequestParams>,
            _cx: RequestContext<RoleServer>,
        ) -> Result<ListPromptsResult, McpError> {
            let id = PromptArgument::new("id").with_description("The note's id.").with_required(true);
            Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
                "summarize",
                Some("Asks for a summary of a note."),
                Some(vec![id]),
            )]))
        }

        async fn get_prompt(
            &self,
            request: GetPromptRequestParams,
            _cx: RequestContext<RoleServer>,
        ) -> Result<GetPromptResponse, McpError> {
            if request.name != "summarize" {
                return Err(McpError::invalid_params(format!("no prompt {}", request.name), None));
            }
            let id = request.arguments.as_ref().and_then(|arguments| arguments.get("id")).and_then(|id| id.as_str());
            let Some(id) = id.and_then(|id| id.parse::<u64>().ok()) else {
                return Err(McpError::invalid_params("`id` must be a note's number", None));
            };
            let messages = vec![
                PromptMessage::new_text(Role::User, super::INTRO),
                PromptMessage::new_text(Role::User, self.note(id)),
            ];
            // Ours sends the prompt's doc comment as its description: so does this.
            Ok(GetPromptResult::new(messages).with_description("Asks for a summary of a note.").into())
        }
    }

    /// The tool alone, as rmcp-macros' README writes it: a unit struct,
    /// `#[tool_handler]` with no router named (so `Self::tool_router()`
    /// per call).
    #[derive(Debug, Clone)]
    pub struct Unit;

    #[tool_router]
    impl Unit {
        #[tool(description = "Echoes the text.")]
        fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
            text
        }
    }

    #[tool_handler]
    impl ServerHandler for Unit {
        fn get_info(&self) -> ServerConfig {
            ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
                .with_instructions("Notes, for the MCP benchmark.")
        }
    }

    pub async fn serve(pipe: DuplexStream) -> std::io::Result<()> {
        let notebook = Notebook { tool_router: Notebook::tool_router() };
        let running = notebook.serve(tokio::io::split(pipe)).await.map_err(std::io::Error::other)?;
        running.waiting().await.map_err(std::io::Error::other)?;
        Ok(())
    }

    pub async fn serve_unit(pipe: DuplexStream) -> std::io::Result<()> {
        let running = Unit.serve(tokio::io::split(pipe)).await.map_err(std::io::Error::other)?;
        running.waiting().await.map_err(std::io::Error::other)?;
        Ok(())
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Impl {
    Ours,
    Rmcp,
    /// rmcp, the tool alone, its router made per call (see `theirs::Unit`).
    RmcpUnit,
}

impl Impl {
    fn name(self) -> &'static str {
        match self {
            Impl::Ours => "ours",
            Impl::Rmcp => "rmcp",
            Impl::RmcpUnit => "rmcp-unit",
        }
    }

    fn parse(name: &str) -> Impl {
        match name {
            "ours" => Impl::Ours,
            "rmcp" if cfg!(feature = "rmcp") => Impl::Rmcp,
            "rmcp-unit" if cfg!(feature = "rmcp") => Impl::RmcpUnit,
            "rmcp" | "rmcp-unit" => panic!("{name} needs the `rmcp` feature"),
            other => panic!("unknown implementation {other} (ours, rmcp)"),
        }
    }

    async fn serve(self, pipe: DuplexStream) -> std::io::Result<()> {
        match self {
            Impl::Ours => ours::serve(pipe).await,
            #[cfg(feature = "rmcp")]
            Impl::Rmcp => theirs::serve(pipe).await,
            #[cfg(feature = "rmcp")]
            Impl::RmcpUnit => theirs::serve_unit(pipe).await,
            #[cfg(not(feature = "rmcp"))]
            Impl::Rmcp | Impl::RmcpUnit => unreachable!(),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Echo,
    Echo1k,
    Read,
    Prompt,
    List,
}

const KINDS: [Kind; 5] = [Kind::Echo, Kind::Echo1k, Kind::Read, Kind::Prompt, Kind::List];

fn text_1k() -> String {
    // 1,024 bytes of words, nothing to escape.
    let words = "the quick brown fox jumps over a lazy dog ";
    let mut text = words.repeat(1024 / words.len() + 1);
    text.truncate(1024);
    text
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Echo => "echo",
            Kind::Echo1k => "echo1k",
            Kind::Read => "read",
            Kind::Prompt => "prompt",
            Kind::List => "list",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Kind::Echo => "`tools/call` echo, 11-byte text",
            Kind::Echo1k => "`tools/call` echo, 1 KB text",
            Kind::Read => "`resources/read notes://7`",
            Kind::Prompt => "`prompts/get summarize`",
            Kind::List => "`tools/list` (one tool)",
        }
    }

    fn parse(name: &str) -> Kind {
        let kind = KINDS.into_iter().find(|kind| kind.name() == name).unwrap_or_else(|| panic!("unknown kind {name}"));
        if matches!(kind, Kind::Read | Kind::Prompt) && !cfg!(feature = "features39") {
            panic!("{name} needs the `features39` feature");
        }
        kind
    }

    /// The echoed text, for the echo kinds.
    fn text(self) -> Option<String> {
        match self {
            Kind::Echo => Some("hello world".to_owned()),
            Kind::Echo1k => Some(text_1k()),
            _ => None,
        }
    }

    /// The request's line, `{id}` to fill in: (before the id, after it).
    fn template(self) -> (String, String) {
        let (method, params) = match self {
            Kind::Echo | Kind::Echo1k => {
                let arguments = serde_json::json!({"text": self.text().unwrap()});
                ("tools/call", format!(r#"{{"name":"echo","arguments":{arguments}}}"#))
            }
            Kind::Read => ("resources/read", r#"{"uri":"notes://7"}"#.to_owned()),
            Kind::Prompt => ("prompts/get", r#"{"name":"summarize","arguments":{"id":"7"}}"#.to_owned()),
            Kind::List => ("tools/list", "{}".to_owned()),
        };
        (r#"{"jsonrpc":"2.0","id":"#.to_owned(), format!(r#","method":"{method}","params":{params}}}"#))
    }

    /// Whether `result` is the right answer.
    fn check(self, result: &Value, text: Option<&str>) -> Result<(), String> {
        let bad = || Err(format!("{}: unexpected result {result}", self.name()));
        match self {
            Kind::Echo | Kind::Echo1k => {
                let text = text.unwrap();
                let block = &result["content"][0];
                let got = block["text"].as_str().unwrap_or_default();
                // Ours: the result's JSON (a JSON string), and structuredContent;
                // rmcp: the string itself.
                let same = got == text || serde_json::from_str::<String>(got).is_ok_and(|got| got == text);
                if block["type"] != "text" || !same || result["isError"] == Value::Bool(true) {
                    return bad();
                }
                if let Some(structured) = result.get("structuredContent") {
                    if structured["result"] != text {
                        return bad();
                    }
                }
            }
            Kind::Read => {
                let contents = &result["contents"];
                if contents.as_array().map(Vec::len) != Some(1)
                    || contents[0]["uri"] != "notes://7"
                    || contents[0]["mimeType"] != "text/markdown"
                    || contents[0]["text"] != NOTE
                {
                    return bad();
                }
            }
            Kind::Prompt => {
                let messages = &result["messages"];
                let text =
                    |i: usize| (&messages[i]["role"], &messages[i]["content"]["type"], &messages[i]["content"]["text"]);
                if messages.as_array().map(Vec::len) != Some(2)
                    || text(0) != (&"user".into(), &"text".into(), &INTRO.into())
                    || text(1) != (&"user".into(), &"text".into(), &NOTE.into())
                {
                    return bad();
                }
            }
            Kind::List => {
                let tools = &result["tools"];
                if tools.as_array().map(Vec::len) != Some(1)
                    || tools[0]["name"] != "echo"
                    || tools[0]["inputSchema"]["properties"]["text"]["type"] != "string"
                {
                    return bad();
                }
            }
        }
        Ok(())
    }
}

/// The server thread's on-CPU time so far (schedstat's first field, ns).
fn thread_cpu(tid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).expect("read schedstat");
    Duration::from_nanos(stat.split(' ').next().and_then(|n| n.parse().ok()).expect("schedstat format"))
}

/// The process's threads (a thread just joined may still be listed).
fn threads() -> std::collections::BTreeSet<u32> {
    let tasks = std::fs::read_dir("/proc/self/task").expect("read /proc/self/task");
    tasks.flatten().filter_map(|task| task.file_name().to_str()?.parse().ok()).collect()
}

struct Run {
    cpu: Duration,
    wall: Duration,
    requests: u64,
    /// Bytes of the last answer (its line).
    answer_bytes: usize,
}

impl Run {
    fn cpu_per_request(&self) -> f64 {
        self.cpu.as_secs_f64() * 1e9 / self.requests as f64
    }
    fn wall_per_request(&self) -> f64 {
        self.wall.as_secs_f64() * 1e9 / self.requests as f64
    }
}

struct Options {
    impls: Vec<Impl>,
    kinds: Vec<Kind>,
    rounds: usize,
    requests: u64,
    warmup: u64,
    window: u64,
    emit: bool,
    /// Print each run's last answer (stderr).
    show: bool,
    versus: Vec<(String, String)>,
}

struct Driver<'a> {
    reader: BufReader<tokio::io::ReadHalf<DuplexStream>>,
    writer: tokio::io::WriteHalf<DuplexStream>,
    kind: Kind,
    template: &'a (String, String),
    text: Option<&'a str>,
    next_id: u64,
    line: Vec<u8>,
    out: Vec<u8>,
}

impl Driver<'_> {
    async fn receive(&mut self) -> Value {
        self.line.clear();
        let n = self.reader.read_until(b'\n', &mut self.line).await.expect("read an answer");
        assert!(n > 0, "the server closed the pipe");
        serde_json::from_slice(&self.line)
            .unwrap_or_else(|err| panic!("answer not JSON ({err}): {:?}", String::from_utf8_lossy(&self.line)))
    }

    /// `count` requests, in windows; every answer checked.
    async fn exchange(&mut self, count: u64, window: u64) {
        let mut left = count;
        let mut seen = Vec::new();
        while left > 0 {
            let batch = left.min(window);
            self.out.clear();
            for i in 0..batch {
                self.out.extend_from_slice(self.template.0.as_bytes());
                self.out.extend_from_slice((self.next_id + i).to_string().as_bytes());
                self.out.extend_from_slice(self.template.1.as_bytes());
                self.out.push(b'\n');
            }
            self.writer.write_all(&self.out).await.expect("write requests");
            seen.clear();
            seen.resize(batch as usize, false);
            for _ in 0..batch {
                let answer = self.receive().await;
                let at = answer["id"].as_u64().and_then(|id| id.checked_sub(self.next_id)).filter(|at| *at < batch);
                let Some(at) = at else { panic!("unexpected message {answer}") };
                assert!(!std::mem::replace(&mut seen[at as usize], true), "answered twice: {answer}");
                let Some(result) = answer.get("result") else {
                    panic!("{}: not a success: {answer}", self.kind.name())
                };
                if let Err(err) = self.kind.check(result, self.text) {
                    panic!("{err}");
                }
            }
            self.next_id += batch;
            left -= batch;
        }
    }
}

/// One run: a fresh server of `imp` answering `options.requests` of `kind`.
async fn run(imp: Impl, kind: Kind, options: &Options) -> Run {
    let before = threads();
    let (client, server) = tokio::io::duplex(1 << 20);
    let (tid_tx, tid_rx) = std::sync::mpsc::channel();
    let thread = std::thread::Builder::new()
        .name(format!("{}-server", imp.name()))
        .spawn(move || {
            // "<pid>/task/<tid>"
            let link = std::fs::read_link("/proc/thread-self").expect("readlink /proc/thread-self");
            let tid: u32 = link.file_name().and_then(|tid| tid.to_str()).and_then(|tid| tid.parse().ok()).expect("tid");
            tid_tx.send(tid).expect("send tid");
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
            runtime.block_on(imp.serve(server))
        })
        .expect("spawn the server thread");
    let tid = tid_rx.recv().expect("server tid");

    let (reader, writer) = tokio::io::split(client);
    let template = kind.template();
    let text = kind.text();
    let mut driver = Driver {
        reader: BufReader::with_capacity(1 << 16, reader),
        writer,
        kind,
        template: &template,
        text: text.as_deref(),
        next_id: 1,
        line: Vec::new(),
        out: Vec::new(),
    };
    let initialize = concat!(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","#,
        r#""capabilities":{},"clientInfo":{"name":"mcp_cpu","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n"
    );
    driver.writer.write_all(initialize.as_bytes()).await.expect("write initialize");
    let init = driver.receive().await;
    assert_eq!(init["id"], 0, "{init}");
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");

    driver.exchange(options.warmup, options.window).await;
    // The server thread is idle (every answer read): its schedstat is current.
    tokio::time::sleep(Duration::from_millis(5)).await;
    let cpu_before = thread_cpu(tid);
    let started = Instant::now();
    driver.exchange(options.requests, options.window).await;
    let wall = started.elapsed();
    tokio::time::sleep(Duration::from_millis(5)).await;
    let cpu = thread_cpu(tid) - cpu_before;
    let during = threads();
    let answer_bytes = driver.line.len();
    if options.show {
        eprint!("{} {}: {}", imp.name(), kind.name(), String::from_utf8_lossy(&driver.line));
    }
    drop(driver);
    thread.join().expect("server thread").unwrap_or_else(|err| panic!("{}: server: {err}", imp.name()));
    let started: Vec<u32> = during.difference(&before).copied().collect();
    assert_eq!(started, [tid], "{}: the server started threads of its own", imp.name());
    Run { cpu, wall, requests: options.requests, answer_bytes }
}

fn micros(ns: f64) -> String {
    format!("{:.2} µs", ns / 1e3)
}

/// `table[kind][impl]`: each round's CPU and wall per request (ns), and
/// the answer's bytes.
type Table = Vec<Vec<Vec<(f64, f64, usize)>>>;

fn report(names: &[String], kinds: &[Kind], table: &Table, rounds: usize) {
    println!();
    print!("| request |");
    for name in names {
        print!(" {name}: CPU/request, median |");
    }
    for name in &names[1..] {
        print!(" {} / {name}: CPU, median of {rounds} rounds (quartiles; range) |", names[0]);
    }
    for name in names {
        print!(" {name}: wall/request |");
    }
    println!(" answer bytes ({}) |", names.join(" / "));
    print!("| --- |");
    for _ in 0..names.len() * 3 - 1 {
        print!(" ---: |");
    }
    println!(" ---: |");
    for (k, kind) in kinds.iter().enumerate() {
        let runs = &table[k];
        print!("| {} |", kind.label());
        for runs in runs {
            print!(" {} |", micros(median(&runs.iter().map(|run| run.0).collect::<Vec<_>>())));
        }
        for other in &runs[1..] {
            let ratios: Vec<f64> = runs[0].iter().zip(other).map(|(a, b)| a.0 / b.0).collect();
            let (lo, hi) = range(&ratios);
            let (q1, q3) = quartiles(&ratios);
            print!(" **{:.2}x** ({q1:.2}x-{q3:.2}x; {lo:.2}x-{hi:.2}x) |", median(&ratios));
        }
        for runs in runs {
            print!(" {} |", micros(median(&runs.iter().map(|run| run.1).collect::<Vec<_>>())));
        }
        let bytes: Vec<String> = runs.iter().map(|runs| runs.last().map_or(0, |run| run.2).to_string()).collect();
        println!(" {} |", bytes.join(" / "));
    }
}

fn in_process(options: &Options) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("client runtime");
    let mut table: Table = vec![vec![Vec::new(); options.impls.len()]; options.kinds.len()];
    for round in 0..options.rounds {
        for (k, kind) in options.kinds.iter().enumerate() {
            // The order of the implementations turns with each kind and round.
            let n = options.impls.len();
            for step in 0..n {
                let i = (step + round + k) % n;
                let imp = options.impls[i];
                let run = runtime.block_on(run(imp, *kind, options));
                if options.emit {
                    println!(
                        "RESULT {} {} {:.1} {:.1} {}",
                        kind.name(),
                        imp.name(),
                        run.cpu_per_request(),
                        run.wall_per_request(),
                        run.answer_bytes
                    );
                } else {
                    eprintln!(
                        "round {}: {:<7} {:<5} {} CPU/request ({:.0} ms CPU), {} wall/request, answer {} bytes",
                        round + 1,
                        kind.name(),
                        imp.name(),
                        micros(run.cpu_per_request()),
                        run.cpu.as_secs_f64() * 1e3,
                        micros(run.wall_per_request()),
                        run.answer_bytes
                    );
                }
                table[k][i].push((run.cpu_per_request(), run.wall_per_request(), run.answer_bytes));
            }
        }
    }
    if !options.emit {
        let names: Vec<String> = options.impls.iter().map(|imp| imp.name().to_owned()).collect();
        report(&names, &options.kinds, &table, options.rounds);
    }
}

/// Whole binaries in turns, each one process per round.
fn versus(options: &Options) {
    let kinds: Vec<&str> = options.kinds.iter().map(|kind| kind.name()).collect();
    let mut table: Table = vec![vec![Vec::new(); options.versus.len()]; options.kinds.len()];
    let n = options.versus.len();
    for round in 0..options.rounds {
        for step in 0..n {
            let b = (step + round) % n;
            let (label, binary) = &options.versus[b];
            let output = std::process::Command::new(binary)
                .args(["--impls", "ours", "--rounds", "1", "--emit", "--kinds", &kinds.join(",")])
                .args(["--requests", &options.requests.to_string(), "--warmup", &options.warmup.to_string()])
                .args(["--window", &options.window.to_string()])
                .stderr(std::process::Stdio::inherit())
                .output()
                .unwrap_or_else(|err| panic!("run {binary}: {err}"));
            assert!(output.status.success(), "{binary} failed: {}", output.status);
            for line in String::from_utf8_lossy(&output.stdout).lines() {
                let fields: Vec<&str> = line.split(' ').collect();
                if fields.first() != Some(&"RESULT") {
                    continue;
                }
                let k = kinds.iter().position(|kind| *kind == fields[1]).expect("a kind asked for");
                let (cpu, wall, bytes) =
                    (fields[3].parse().unwrap(), fields[4].parse().unwrap(), fields[5].parse().unwrap());
                eprintln!(
                    "round {}: {:<7} {:<10} {} CPU/request, {} wall/request, answer {bytes} bytes",
                    round + 1,
                    fields[1],
                    label,
                    micros(cpu),
                    micros(wall)
                );
                table[k][b].push((cpu, wall, bytes));
            }
        }
    }
    let names: Vec<String> = options.versus.iter().map(|(label, _)| label.clone()).collect();
    report(&names, &options.kinds, &table, options.rounds);
}

fn main() {
    let mut options = Options {
        impls: if cfg!(feature = "rmcp") { vec![Impl::Ours, Impl::Rmcp] } else { vec![Impl::Ours] },
        kinds: KINDS
            .into_iter()
            .filter(|kind| cfg!(feature = "features39") || !matches!(kind, Kind::Read | Kind::Prompt))
            .collect(),
        rounds: 31,
        requests: 5_000,
        warmup: 1_000,
        window: 32,
        emit: false,
        show: false,
        versus: Vec::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--impls" => options.impls = value().split(',').map(Impl::parse).collect(),
            "--kinds" => options.kinds = value().split(',').map(Kind::parse).collect(),
            "--rounds" => options.rounds = value().parse().expect("--rounds N"),
            "--requests" => options.requests = value().parse().expect("--requests N"),
            "--warmup" => options.warmup = value().parse().expect("--warmup N"),
            "--window" => options.window = value().parse().expect("--window N"),
            "--emit" => options.emit = true,
            "--show" => options.show = true,
            "--versus" => {
                options.versus = value()
                    .split(',')
                    .map(|pair| {
                        let (label, path) = pair.split_once('=').expect("--versus LABEL=PATH,LABEL=PATH");
                        (label.to_owned(), path.to_owned())
                    })
                    .collect()
            }
            other => panic!("unknown argument {other}"),
        }
    }
    assert!(options.window > 0 && options.requests > 0, "--window and --requests must be positive");
    if options.versus.is_empty() {
        in_process(&options);
    } else {
        versus(&options);
    }
}
