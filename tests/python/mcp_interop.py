"""The official MCP Python SDK (pinned in requirements.txt) against an MCP
server launched as a subprocess: `python mcp_interop.py calculator PATH` or
`python mcp_interop.py notes PATH`, over stdio; with `--http` after PATH the
server listens on a free port and the SDK connects over Streamable HTTP.

Each check prints `ok <what>`; the first failure raises. The Rust test
`tests/tests/mcp/mcp_python.rs` runs this and looks for the lines.
"""

import asyncio
import json
import subprocess
import sys
import threading
import time

import jsonschema
from jsonschema.validators import validator_for
from referencing import Registry

from mcp import Client, MCPError, StdioServerParameters


def ok(what):
    print(f"ok {what}", flush=True)


def resolve_pointer(document, pointer):
    """Follows a local `#/...` JSON pointer inside `document`."""
    assert pointer.startswith("#"), f"$ref {pointer!r} points outside the tool's own schema"
    node = document
    for part in [p for p in pointer[1:].split("/") if p]:
        part = part.replace("~1", "/").replace("~0", "~")
        assert isinstance(node, dict) and part in node, f"$ref {pointer!r} does not resolve"
        node = node[part]
    return node


def check_schema(name, schema, object_root=True):
    """The schema is valid 2020-12, every `$ref` resolves inside it, and it
    compiles with an empty registry (as the SDK's own validator does)."""
    assert isinstance(schema, dict), f"{name}: schema is not an object"
    if object_root:
        assert schema.get("type") == "object", f"{name}: root type is {schema.get('type')!r}"
    cls = validator_for(schema, default=jsonschema.Draft202012Validator)
    assert cls is jsonschema.Draft202012Validator, f"{name}: not a 2020-12 schema ({cls.__name__})"
    cls.check_schema(schema)

    def walk(node):
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                resolve_pointer(schema, ref)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return cls(schema, registry=Registry())


def accepted_by_server(result):
    """A call the server decoded (it may still fail for its own reasons)."""
    if not result.is_error:
        return True
    text = result.content[0].text
    return "(error -32602)" not in text


async def agree(client, validators, tool, arguments):
    """The tool's input schema and the server agree on `arguments`."""
    schema_ok = validators[tool].is_valid(arguments)
    result = await client.call_tool(tool, arguments)
    server_ok = accepted_by_server(result)
    assert schema_ok == server_ok, (
        f"{tool}({json.dumps(arguments)}): schema says {schema_ok}, server says {server_ok}: {result}"
    )
    return result


# Arguments per calculator tool: what its schema and the server accept.
CALCULATOR_CASES = {
    "subtract": [
        {"minuend": 42, "subtrahend": 23},
        {},
        {"minuend": 1},
        {"minuend": "1", "subtrahend": 2},
        {"minuend": 1.5, "subtrahend": 2},
        {"minuend": 1, "subtrahend": 2, "extra": 3},
    ],
    "sum": [{"numbers": [1, 2, 3]}, {"numbers": []}, {}, {"numbers": "1,2"}, {"numbers": [1.5]}],
    "greet": [
        {"name": "Ada"},
        {"name": "Ada", "greeting": "Hi"},
        {"name": "Ada", "greeting": None},
        {"greeting": "Hi"},
        {"name": 5},
    ],
    "divide": [{"dividend": 7, "divisor": 2}, {"dividend": 7}, {"dividend": 7, "divisor": "2"}],
    "sleep": [{"ms": 1}, {"ms": -1}, {"ms": "1"}],
    "get_data": [{}, {"x": 1}],
    "echo": [{"value": {"any": ["thing"]}}, {"value": None}, {}],
}


async def calculator_session(target, mode):
    params = target or StdioServerParameters(command=PATH, args=["--mcp"])
    started = time.monotonic()
    async with Client(params, mode=mode) as client:
        elapsed = time.monotonic() - started
        version = client.protocol_version
        if mode == "auto":
            # The probe (`server/discover`) is answered: no 10 s fallback.
            assert version == "2026-07-28", version
            assert elapsed < 1.0, f"connecting took {elapsed:.2f}s"
            ok(f"auto mode lands on {version} in {elapsed * 1000:.0f} ms")
        else:
            assert version == "2025-11-25", version
            ok(f"initialize negotiates {version}")
        assert client.server_info is None or client.server_info.name == "calculator", client.server_info
        modern = version == "2026-07-28"

        listing = await client.list_tools()
        names = {tool.name for tool in listing.tools}
        # Not tools: notifications, `panic` (hidden), and the `ticks`
        # subscription with its unsubscribe method (a stream, not a result).
        expected = {
            "subtract", "sum", "get_data", "echo", "greet", "fail", "sleep", "ask_client", "notify_client", "divide",
            "wait", "waiting",
        }
        assert names == expected, f"tools: {sorted(names)}"
        ok(f"{version}: tools/list lists every method but notifications and hidden ones")

        validators = {}
        for tool in listing.tools:
            validators[tool.name] = check_schema(tool.name, tool.input_schema)
            if tool.output_schema is not None:
                check_schema(f"{tool.name} output", tool.output_schema, object_root=not modern)
        ok(f"{version}: every input and output schema compiles, self-contained")

        subtract = next(tool for tool in listing.tools if tool.name == "subtract")
        assert subtract.title == "Subtract", subtract
        assert subtract.annotations.read_only_hint is True, subtract.annotations
        assert subtract.annotations.open_world_hint is False, subtract.annotations
        assert subtract.description.startswith("Subtracts"), subtract.description
        ok(f"{version}: titles, hints and descriptions come from the trait")

        for tool, cases in CALCULATOR_CASES.items():
            for arguments in cases:
                await agree(client, validators, tool, arguments)
        ok(f"{version}: schemas and the server accept and reject the same arguments")

        result = await client.call_tool("subtract", {"minuend": 42, "subtrahend": 23})
        assert not result.is_error, result
        assert result.content[0].text == "19", result.content
        assert result.structured_content == (19 if modern else {"result": 19}), result.structured_content
        result = await client.call_tool("get_data", {})
        assert result.structured_content == (["hello", 5] if modern else {"result": ["hello", 5]})
        ok(f"{version}: results are a JSON text block plus structured content")

        result = await client.call_tool("subtract", {"minuend": 42})
        assert result.is_error, result
        assert "subtrahend" in result.content[0].text, result.content
        ok(f"{version}: invalid arguments are a tool execution error naming the parameter")

        result = await client.call_tool("divide", {"dividend": 1, "divisor": 0})
        assert result.is_error and "Division by zero" in result.content[0].text, result
        ok(f"{version}: a method's own error is a result with isError")

        try:
            await client.call_tool("no_such_tool", {})
            raise AssertionError("an unknown tool must be a protocol error")
        except MCPError as err:
            assert err.code == -32602, err
        try:
            await client.call_tool("panic", {})
            raise AssertionError("a hidden method must not be callable")
        except MCPError as err:
            assert err.code == -32602, err
        ok(f"{version}: unknown and hidden tools are protocol errors (-32602)")

        # A call given up on: the SDK sends notifications/cancelled, the
        # server stops it, and the connection carries on.
        try:
            await client.call_tool("sleep", {"ms": 60000}, read_timeout_seconds=0.2)
            raise AssertionError("the slow call should time out")
        except MCPError:
            pass
        result = await client.call_tool("subtract", {"minuend": 2, "subtrahend": 1})
        assert result.content[0].text == "1", result
        ok(f"{version}: a cancelled call leaves the connection usable")


async def notes_session(target, mode):
    params = target or StdioServerParameters(command=PATH, args=[])
    async with Client(params, mode=mode) as client:
        version = client.protocol_version
        listing = await client.list_tools()
        validators = {tool.name: check_schema(tool.name, tool.input_schema) for tool in listing.tools}
        for tool in listing.tools:
            if tool.output_schema is not None:
                check_schema(f"{tool.name} output", tool.output_schema, object_root=version != "2026-07-28")
        assert "add_note" in validators and "search" in validators, sorted(validators)
        ok(f"{version}: notes tools listed, schemas compile")

        added = await agree(client, validators, "add_note", {"title": "groceries", "body": "eggs, milk", "tags": ["home"]})
        assert not added.is_error, added
        await agree(client, validators, "add_note", {"title": "x", "tags": "home"})
        found = await agree(client, validators, "search", {"query": "milk"})
        assert not found.is_error, found
        assert found.structured_content["matches"][0]["title"] == "groceries", found.structured_content
        ok(f"{version}: notes are added and found; objects are structured content as they are")

        progress = []

        async def on_progress(value, total, message):
            progress.append((value, total, message))

        result = await client.call_tool("reindex", {}, progress_callback=on_progress)
        assert not result.is_error, result
        assert progress and progress[-1][0] == progress[-1][1], progress
        ok(f"{version}: progress notifications reach the caller ({len(progress)})")


def serve_http(args):
    """Starts `PATH args --http 127.0.0.1:0` and answers its endpoint's URL
    and process (its stderr read on a thread, so it never blocks)."""
    server = subprocess.Popen(
        [PATH, *args, "--http", "127.0.0.1:0"], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    url = None
    for line in server.stderr:
        if line.startswith("listening on http://"):
            url = line.split(" ")[-1].strip() + "/mcp"
            break
    assert url, "the server did not say where it listens"
    threading.Thread(target=lambda: server.stderr.read(), daemon=True).start()
    return url, server


PATH = None


async def main():
    global PATH
    which, PATH = sys.argv[1], sys.argv[2]
    http = sys.argv[3:] == ["--http"]
    session = {"calculator": calculator_session, "notes": notes_session}[which]
    server = None
    target = None
    if http:
        target, server = serve_http(["--mcp"] if which == "calculator" else [])
        ok(f"serving Streamable HTTP at {target}")
    try:
        for mode in ("auto", "legacy"):
            await session(target, mode)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)
    print("all checks passed", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
