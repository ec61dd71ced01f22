//! Both directions on one connection: a server method that notifies and
//! calls back its caller during a request, and per-connection data.

use crate::client_support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rpc_runtime::transport::Transport;
use rpc_runtime::{rpc, ClientError, Context, ErrorObject, Framing, Peer, Server};

/// What the editor (the client side) answers.
#[rpc(rename_all = "camelCase", namespace = "workspace", namespace_separator = "/")]
pub trait Editor {
    /// A configuration value.
    fn configuration(&self, section: String) -> Result<String, ErrorObject>;

    /// A message for the editor's log.
    #[rpc(notification, name = "logMessage")]
    fn log_message(&self, text: String);
}

/// What the language server answers.
#[rpc]
pub trait Language {
    /// Hover text for `word`, styled as the editor's configuration says.
    async fn hover(&self, word: String, cx: Context) -> Result<String, ErrorObject>;

    /// Who the connection belongs to.
    fn whoami(&self, cx: Context) -> Option<String>;
}

#[derive(Clone, Default)]
struct EditorImpl {
    events: Arc<Mutex<Vec<String>>>,
}

impl Editor for EditorImpl {
    fn configuration(&self, section: String) -> Result<String, ErrorObject> {
        self.events.lock().unwrap().push(format!("configuration {section}"));
        match section.as_str() {
            "style" => Ok("bold".to_owned()),
            _ => Err(ErrorObject::new(-32099, format!("no section `{section}`"))),
        }
    }

    fn log_message(&self, text: String) {
        self.events.lock().unwrap().push(format!("log {text}"));
    }
}

/// An authenticated identity, set per connection.
struct User(String);

struct LanguageImpl;

impl Language for LanguageImpl {
    async fn hover(&self, word: String, cx: Context) -> Result<String, ErrorObject> {
        let editor = EditorClient::new(cx.peer().expect("a connection").clone());
        editor.log_message(format!("hovering {word}")).await.map_err(internal)?;
        let style = editor.configuration("style".to_owned()).await.map_err(internal)?;
        // The editor's own error comes back as its error object.
        let missing = editor.configuration("colour".to_owned()).await.unwrap_err();
        let code = missing.server_error().map_or(0, ErrorObject::code);
        Ok(format!("{style} {word} ({code})"))
    }

    fn whoami(&self, cx: Context) -> Option<String> {
        cx.extension::<User>().map(|user| user.0.clone())
    }
}

fn internal<E: std::fmt::Debug + std::fmt::Display>(err: ClientError<E>) -> ErrorObject {
    ErrorObject::internal_error(format!("calling the editor failed: {err}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_method_calls_back_its_client() {
    // Over a byte stream in both framings, and over the in-memory message
    // transport: the same peer logic runs over each.
    for framing in [Some(Framing::NewlineDelimited), Some(Framing::ContentLength), None] {
        let editor = EditorImpl::default();
        let builder = Peer::builder().router(editor.clone().into_rpc());
        let server = Server::new(LanguageImpl.into_rpc());
        let peer = match framing {
            None => builder.connect(server).await.unwrap(),
            Some(framing) => {
                let (ours, theirs) = tokio::io::duplex(4096);
                let server = server.framing(framing);
                tokio::spawn(async move {
                    let (reader, writer) = tokio::io::split(theirs);
                    server.serve(rpc_runtime::transport::stream::Stream::new(reader, writer)).await
                });
                let (reader, writer) = tokio::io::split(ours);
                builder
                    .framing(framing)
                    .connect(rpc_runtime::transport::stream::Stream::new(reader, writer))
                    .await
                    .unwrap()
            }
        };
        let language = LanguageClient::new(peer);
        let answer = language.hover("main".to_owned()).await.unwrap();
        assert_eq!(answer, "bold main (-32099)");
        // The notification and both callbacks arrived before the answer.
        let events = editor.events.lock().unwrap().clone();
        assert_eq!(events, ["log hovering main", "configuration style", "configuration colour"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_requests_call_back_concurrently() {
    let editor = EditorImpl::default();
    let peer =
        Peer::builder().router(editor.clone().into_rpc()).connect(Server::new(LanguageImpl.into_rpc())).await.unwrap();
    let language = LanguageClient::new(peer);
    let calls: Vec<_> = (0..100)
        .map(|i| {
            let language = language.clone();
            tokio::spawn(async move { (i, language.hover(format!("w{i}")).await) })
        })
        .collect();
    for call in calls {
        let (i, answer) = call.await.unwrap();
        assert_eq!(answer.unwrap(), format!("bold w{i} (-32099)"));
    }
    assert_eq!(editor.events.lock().unwrap().len(), 300);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_a_service_answers_callbacks_with_method_not_found() {
    let peer = Peer::builder().connect(Server::new(LanguageImpl.into_rpc())).await.unwrap();
    let err = LanguageClient::new(peer).hover("x".to_owned()).await.unwrap_err();
    let error = err.server_error().expect("an error object").clone();
    assert!(error.message().contains("calling the editor failed"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_connection_data_reaches_handlers() {
    let server = Server::new(LanguageImpl.into_rpc());
    let (ours, theirs) = tokio::io::duplex(4096);
    let (their_reader, their_writer) = tokio::io::split(theirs);
    let cx = Context::new().with_extension(User("ada".to_owned()));
    tokio::spawn(async move {
        server.serve(rpc_runtime::transport::stream::Stream::new(their_reader, their_writer).context(cx)).await
    });
    let (reader, writer) = tokio::io::split(ours);
    let language = LanguageClient::new(
        Peer::builder().connect(rpc_runtime::transport::stream::Stream::new(reader, writer)).await.unwrap(),
    );
    assert_eq!(language.whoami().await.unwrap().as_deref(), Some("ada"));

    // A connection without it sees none.
    let language = LanguageClient::new(Peer::builder().connect(Server::new(LanguageImpl.into_rpc())).await.unwrap());
    assert_eq!(language.whoami().await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serving_a_stream_finishes_callbacks_then_returns_at_end_of_input() {
    // The client sends a request and closes its side at once; the server's
    // callback then fails promptly (nobody can answer), and serving
    // still answers the request before returning.
    let server = Server::new(LanguageImpl.into_rpc()).framing(Framing::ContentLength);
    let request = r#"{"jsonrpc":"2.0","method":"hover","params":["x"],"id":1}"#;
    let input = format!("Content-Length: {}\r\n\r\n{request}", request.len()).into_bytes();
    let (writer, mut output) = tokio::io::duplex(64 * 1024);
    let served = server.serve(rpc_runtime::transport::stream::Stream::new(std::io::Cursor::new(input), writer));
    tokio::time::timeout(Duration::from_secs(30), served).await.expect("serving returned").unwrap();
    let mut bytes = Vec::new();
    tokio::io::AsyncReadExt::read_to_end(&mut output, &mut bytes).await.unwrap();
    let text = String::from_utf8(bytes).unwrap();
    // The log notification was written, then the answer: the configuration
    // call could not be answered because the input had ended.
    assert!(text.contains("\"method\":\"workspace/logMessage\""), "{text}");
    assert!(text.contains("\"id\":1}"), "{text}");
    assert!(text.contains("the connection closed"), "{text}");
}

#[test]
fn the_lsp_pair_example_runs_both_ends() {
    for framing in ["content-length", "ndjson"] {
        let output = std::process::Command::new(client_support::example("lsp_pair"))
            .args(["--framing", framing])
            .output()
            .expect("the example runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{}\n{stdout}", String::from_utf8_lossy(&output.stderr));
        for expected in [
            "editor <- window/logMessage (3) server: initializing file:///project",
            "editor -> initialize: ServerInfo { name: \"lsp_pair\", hover: true }",
            "editor <- textDocument/publishDiagnostics file:///project/main.rs [\"line 1: unfinished work\"]",
            "editor -> textDocument/hover: Some(\"    // TODO: GREET\")",
            "editor -> batch: Some(\"FN MAIN() {\") None",
            "done: the editor saw 4 messages from the server",
        ] {
            assert!(stdout.lines().any(|line| line == expected), "missing `{expected}` in:\n{stdout}");
        }
        // The server asked for the configuration before answering the hover.
        let asked = stdout.find("workspace/configuration").unwrap();
        let answered = stdout.find("textDocument/hover:").unwrap();
        assert!(asked < answered, "{stdout}");
    }
}

/// A handler that waits until it is cancelled.
#[rpc]
pub trait Waiter {
    /// Reports that it started, waits for cancellation, reports it.
    async fn wait(&self, cx: Context) -> bool;
}

struct WaiterImpl(tokio::sync::mpsc::UnboundedSender<&'static str>);

impl Waiter for WaiterImpl {
    async fn wait(&self, cx: Context) -> bool {
        let _ = self.0.send("started");
        cx.cancelled().await;
        let _ = self.0.send(if cx.is_cancelled() { "cancelled" } else { "woken but not cancelled" });
        true
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_the_connection_cancels_running_handlers_without_cancellation_configured() {
    use tokio::io::AsyncWriteExt;
    for stop in ["close", "drop the last handle", "a write failure"] {
        let (events, mut seen) = tokio::sync::mpsc::unbounded_channel();
        // One pipe each way, so that the way back can break alone.
        let (their_writer, reader) = tokio::io::duplex(4096);
        let (writer, their_reader) = tokio::io::duplex(4096);
        let mut their_writer = their_writer;
        let peer = Peer::builder()
            .router(WaiterImpl(events).into_rpc())
            .connect(rpc_runtime::transport::stream::Stream::new(reader, writer))
            .await
            .unwrap();
        their_writer.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"wait\",\"id\":1}\n").await.unwrap();
        assert_eq!(eventually(seen.recv()).await, Some("started"));
        let _peer = match stop {
            "close" => {
                peer.close();
                Some(peer)
            }
            "drop the last handle" => {
                drop(peer);
                None
            }
            _ => {
                // Nobody reads the answers any more; the next one fails to write.
                drop(their_reader);
                their_writer.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"nope\",\"id\":2}\n").await.unwrap();
                Some(peer)
            }
        };
        assert_eq!(eventually(seen.recv()).await, Some("cancelled"), "after {stop}");
    }
}

/// Waits for something the test knows will happen; the limit only turns a
/// bug into a failure instead of a hang.
async fn eventually<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), future).await.expect("the event never happened")
}

/// A dialect of string ids only, defined with the runtime's public API.
struct StringIds;

impl rpc_runtime::dispatch::Dialect for StringIds {
    fn check_id(&self, id: &rpc_runtime::serde_json::value::RawValue) -> Result<(), ErrorObject> {
        if id.get().starts_with('"') {
            Ok(())
        } else {
            Err(ErrorObject::new(-32600, "Invalid Request: ids must be strings"))
        }
    }
}

#[tokio::test]
async fn a_dialect_on_a_peer_holds_the_requests_it_serves_to_its_rules() {
    // Our own calls carry integer ids: a side that only takes string ids
    // refuses them before its handler runs, one without the dialect serves them.
    for strict in [false, true] {
        let (ours, theirs) = rpc_runtime::transport::memory::memory_pair();
        let editor = EditorImpl::default();
        let events = Arc::clone(&editor.events);
        let builder = Peer::builder().router(editor.into_rpc());
        let builder = if strict { builder.dialect(StringIds) } else { builder };
        let _serving = builder.connect(Transport::new(theirs.0, theirs.1)).await.unwrap();
        let caller = EditorClient::new(Peer::builder().connect(Transport::new(ours.0, ours.1)).await.unwrap());
        let answer = caller.configuration("style".to_owned()).await;
        if strict {
            match answer {
                Err(ClientError::Server(error)) => assert_eq!(error.code(), -32600, "{error:?}"),
                other => panic!("expected the dialect's refusal, got {other:?}"),
            }
            assert!(events.lock().unwrap().is_empty(), "the refused request ran");
        } else {
            assert_eq!(answer.expect("served"), "bold");
            assert_eq!(*events.lock().unwrap(), ["configuration style"]);
        }
    }
}
