"""Drives the `language_server` example with pygls' `LanguageClient` (pygls
pinned in requirements.txt) over stdio: initialize (declaring
window.workDoneProgress), open a document, run `languageServer.countWords`
once to completion and once cancelled with `$/cancelRequest` after its
first progress report, then shutdown and exit.

The client answers the server's `workspace/configuration` with
`[{"delayMs": 200}]` and its `window/workDoneProgress/create`, and records
`$/progress` and `textDocument/publishDiagnostics`.

Usage: lsp_client.py SERVER_BINARY. Prints one JSON line,
`{"checks": [{"name", "ok", "detail"}...]}`, and exits 1 when a check
failed (the failing checks also go to stderr)."""

import asyncio
import json
import re
import sys

from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.exceptions import JsonRpcException
from pygls.lsp.client import LanguageClient

URI = "file:///tmp/rpc-lsp-pygls/words.txt"
# No trailing newline: five lines for any reading of "line".
TEXT = "one two three\nfour five six seven\neight nine TODO\nten\neleven twelve"
WORDS = re.findall(r"[A-Za-z0-9_]+", TEXT)
LINES = TEXT.split("\n")
TIMEOUT = 20
CONVERTER = get_converter()


class Client(LanguageClient):
    def __init__(self):
        super().__init__("rpc-tests-lsp-client", "1.0")
        self.exit_code = None
        self.exited = asyncio.Event()

    async def server_exit(self, server):
        self.exit_code = server.returncode
        self.exited.set()


def to_plain(value):
    """lsprotocol objects (or namedtuples, or dicts) as plain JSON values."""
    if hasattr(value, "__attrs_attrs__"):
        return to_plain(CONVERTER.unstructure(value))
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {k: to_plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    return value


async def run(server):
    checks = []

    def check(name, ok, detail):
        checks.append({"name": name, "ok": bool(ok), "detail": "" if ok else detail})
        if not ok:
            print(f"FAIL {name}: {detail}", file=sys.stderr)

    client = Client()
    configuration_requests = []
    created_tokens = []
    progress = []  # (token, value) in arrival order
    diagnostics = []
    first_report = {}  # token -> asyncio.Event, for the cancelled run
    loop = asyncio.get_running_loop()

    @client.feature(types.WORKSPACE_CONFIGURATION)
    def configuration(params):
        configuration_requests.append(to_plain(params))
        return [{"delayMs": 200}]

    @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
    def create_progress(params):
        created_tokens.append(params.token)
        first_report[params.token] = asyncio.Event()
        return None

    @client.feature(types.PROGRESS)
    def on_progress(params):
        value = to_plain(params.value)
        progress.append((params.token, value))
        if isinstance(value, dict) and value.get("kind") == "report" and params.token in first_report:
            loop.call_soon(first_report[params.token].set)

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params):
        diagnostics.append(to_plain(params))

    await client.start_io(server)
    # pygls pipes the server's stderr but never reads it: pass it on, so
    # that a chatty server cannot block on a full pipe.
    relay = asyncio.create_task(_relay(client._server.stderr))
    try:
        result = await asyncio.wait_for(
            client.initialize_async(
                types.InitializeParams(
                    process_id=None,
                    root_uri=None,
                    capabilities=types.ClientCapabilities(
                        window=types.WindowClientCapabilities(work_done_progress=True),
                        workspace=types.WorkspaceClientCapabilities(configuration=True),
                    ),
                )
            ),
            TIMEOUT,
        )
        plain = to_plain(result)
        caps = plain.get("capabilities", {})
        check(
            "initialize: serverInfo and capabilities",
            plain.get("serverInfo", {}).get("name") == "language_server"
            and caps.get("textDocumentSync") == {"openClose": True, "change": 2}
            and caps.get("hoverProvider") is True
            and caps.get("executeCommandProvider", {}).get("commands") == ["languageServer.countWords"],
            f"got {json.dumps(plain)}",
        )
        client.initialized(types.InitializedParams())
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=URI, language_id="plaintext", version=1, text=TEXT)
            )
        )

        # Once to completion.
        execute = types.ExecuteCommandParams(command="languageServer.countWords", arguments=[URI])
        count = await asyncio.wait_for(client.workspace_execute_command_async(execute), TIMEOUT)
        check(
            "countWords returns the number of words",
            count == len(WORDS),
            f"expected {len(WORDS)}, got {count!r}",
        )
        check(
            "the server asked workspace/configuration for section languageServer, before answering",
            len(configuration_requests) == 1
            and configuration_requests[0].get("items") == [{"section": "languageServer"}],
            f"workspace/configuration requests: {configuration_requests!r}",
        )
        token = created_tokens[0] if created_tokens else None
        values = [value for (t, value) in progress if t == token]
        kinds = [value.get("kind") for value in values]
        messages = [value.get("message") for value in values if value.get("kind") == "report"]
        want_messages = [f"line {i}/{len(LINES)}" for i in range(1, len(LINES) + 1)]
        check(
            "progress: created a string token, then begin, one report per line, end, all with that token",
            len(created_tokens) == 1
            and isinstance(token, str)
            and token != ""
            and all(t == token for (t, _) in progress)
            and kinds == ["begin"] + ["report"] * len(LINES) + ["end"]
            and values[0].get("title") == "Counting words"
            and messages == want_messages,
            f"created {created_tokens!r}; $/progress {progress!r}; expected report messages {want_messages!r}",
        )

        # Once cancelled, after its first progress report.
        done_before = len(progress)
        request_id = "count-to-cancel"
        pending = client.protocol.send_request_async(types.WORKSPACE_EXECUTE_COMMAND, execute, msg_id=request_id)
        await asyncio.wait_for(_until(lambda: len(created_tokens) == 2), TIMEOUT)
        second = created_tokens[1]
        await asyncio.wait_for(first_report[second].wait(), TIMEOUT)
        client.cancel_request(types.CancelParams(id=request_id))
        outcome = None
        try:
            outcome = ("result", await asyncio.wait_for(pending, TIMEOUT))
        except JsonRpcException as err:
            outcome = ("error", err.code, err.message)
        check(
            "the cancelled countWords fails with -32800 (RequestCancelled)",
            outcome[0] == "error" and outcome[1] == -32800,
            f"got {outcome!r}",
        )
        await asyncio.wait_for(_until(lambda: any(t == second and v.get("kind") == "end" for (t, v) in progress)), 5)
        later = [(t, v) for (t, v) in progress[done_before:]]
        kinds = [v.get("kind") for (_, v) in later]
        check(
            "the cancelled run: a new token, begin, fewer reports than lines, and still its end",
            second != token
            and all(t == second for (t, _) in later)
            and kinds[0] == "begin"
            and kinds[-1] == "end"
            and 1 <= kinds.count("report") < len(LINES),
            f"token {second!r} (first run {token!r}); $/progress {later!r}",
        )
        check(
            "a second workspace/configuration request for the second run",
            len(configuration_requests) == 2,
            f"workspace/configuration requests: {configuration_requests!r}",
        )
        check(
            "didOpen published one diagnostic for the TODO, with the document's version",
            len(diagnostics) >= 1
            and diagnostics[0].get("uri") == URI
            and diagnostics[0].get("version") == 1
            and [d.get("range") for d in diagnostics[0].get("diagnostics", [])]
            == [{"start": {"line": 2, "character": 11}, "end": {"line": 2, "character": 15}}],
            f"publishDiagnostics: {diagnostics!r}",
        )

        # shutdown, exit, and the exit code.
        shutdown = await asyncio.wait_for(client.shutdown_async(None), TIMEOUT)
        check("shutdown answers null", shutdown is None, f"got {shutdown!r}")
        client.exit(None)
        try:
            await asyncio.wait_for(client.exited.wait(), TIMEOUT)
        except asyncio.TimeoutError:
            pass
        check(
            "after shutdown and exit the server exits with code 0",
            client.exit_code == 0,
            f"exit code {client.exit_code!r}" + ("" if client.exited.is_set() else " (had not exited in time)"),
        )
    except Exception as err:  # a timeout or an unexpected answer: say which
        import traceback

        check("the script ran to its end", False, "".join(traceback.format_exception(err)))
    finally:
        if client._server is not None and client._server.returncode is None:
            client._server.kill()
        await asyncio.wait_for(client.stop(), TIMEOUT)
        await asyncio.wait_for(relay, TIMEOUT)
    return checks


async def _relay(stream):
    while line := await stream.readline():
        sys.stderr.write("server: " + line.decode(errors="replace"))


async def _until(condition, interval=0.01):
    while not condition():
        await asyncio.sleep(interval)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: lsp_client.py SERVER_BINARY")
    checks = asyncio.run(run(sys.argv[1]))
    print(json.dumps({"checks": checks}))
    sys.exit(0 if all(c["ok"] for c in checks) else 1)


if __name__ == "__main__":
    main()
