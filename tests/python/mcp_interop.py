"""The official MCP Python SDK (pinned in requirements.txt) against an MCP
server launched as a subprocess: `python mcp_interop.py calculator PATH` or
`python mcp_interop.py notes PATH`, over stdio; with `--http` after PATH the
server listens on a free port and the SDK connects over Streamable HTTP.
The notes session covers tools, resources (listed, templates, read), the
`summarize_note` prompt and completion of its and the template's `id`,
change notifications (`resources/subscribe` and the `message_handler` in
the handshake era, `Client.listen` in 2026-07-28), logs at two levels
(`set_logging_level`, or the per-request `logLevel` and `Client(log_level=)`),
elicitation (`clear_notes`, answered by `elicitation_callback`; a client
without the capability) and sampling (`suggest_title`, `sampling_callback`).

Each check prints `ok <what>`; the first failure raises. The Rust test
`tests/tests/mcp/mcp_python.rs` runs this and looks for the lines.
"""

import asyncio
import json
import subprocess
import sys
import threading
import time
import warnings

import jsonschema
from jsonschema.validators import validator_for
from referencing import Registry

from mcp import Client, MCPError, StdioServerParameters
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import (
    CreateMessageResult,
    ElicitResult,
    PromptReference,
    ResourceListChangedNotification,
    ResourceTemplateReference,
    ResourceUpdatedNotification,
    TextContent,
)

# `set_logging_level`, `subscribe_resource` and sampling are deprecated by
# 2026-07-28 but are what the handshake era has: exercised on purpose.
warnings.simplefilter("ignore", MCPDeprecationWarning)

LOG_LEVEL = "io.modelcontextprotocol/logLevel"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"

# What `clear_notes` asks for.
CONFIRM_SCHEMA = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "description": "Delete every note? This cannot be undone."}},
    "required": ["confirm"],
}

NOTES_TOOLS = {"add_note", "search", "get_note", "delete_note", "reindex", "clear_notes", "suggest_title"}


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


class Host:
    """The client's side of a session: what the server sent it (through the
    SDK's `message_handler` and `logging_callback`) and its answers to the
    server's questions (`elicitation_callback`, `sampling_callback`), given
    in advance, one per question."""

    def __init__(self):
        self.notifications = []
        self.errors = []
        self.logs = []
        self.elicitations = []
        self.elicit_answers = []
        self.samplings = []
        self.sample_answers = []

    async def on_message(self, message):
        if isinstance(message, Exception):
            self.errors.append(message)
        else:
            self.notifications.append(message)

    async def on_log(self, params):
        self.logs.append(params)

    async def on_elicit(self, context, params):
        self.elicitations.append(params)
        assert self.elicit_answers, f"unexpected elicitation: {params}"
        return self.elicit_answers.pop(0)

    async def on_sample(self, context, params):
        self.samplings.append(params)
        assert self.sample_answers, f"unexpected sampling: {params}"
        return self.sample_answers.pop(0)

    def client(self, params, mode, **options):
        return Client(
            params,
            mode=mode,
            message_handler=self.on_message,
            logging_callback=self.on_log,
            elicitation_callback=self.on_elicit,
            sampling_callback=self.on_sample,
            **options,
        )

    def updated(self):
        """The URIs of the `notifications/resources/updated` received."""
        return [n.params.uri for n in self.notifications if isinstance(n, ResourceUpdatedNotification)]

    def list_changes(self):
        return [n for n in self.notifications if isinstance(n, ResourceListChangedNotification)]


async def eventually(what, check, timeout=10.0):
    """Waits until `check()` holds (the SDK hands notifications to the
    callbacks on tasks of their own), or fails naming `what`."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        await asyncio.sleep(0.02)


def answer(result, modern):
    """A tool's plain (non-object) result: bare in 2026-07-28, wrapped as
    `{"result": ...}` in structured content before."""
    assert not result.is_error, result
    return result.structured_content if modern else result.structured_content["result"]


async def add(client, title, body):
    added = await client.call_tool("add_note", {"title": title, "body": body})
    assert not added.is_error, added
    return added.structured_content["id"]


async def count(client):
    found = await client.call_tool("search", {"query": "", "limit": 1})
    assert not found.is_error, found
    return found.structured_content["total"]


async def notes_session(target, mode):
    params = target or StdioServerParameters(command=PATH, args=[])
    host = Host()
    async with host.client(params, mode) as client:
        version = client.protocol_version
        listing = await client.list_tools()
        validators = {tool.name: check_schema(tool.name, tool.input_schema) for tool in listing.tools}
        for tool in listing.tools:
            if tool.output_schema is not None:
                check_schema(f"{tool.name} output", tool.output_schema, object_root=version != "2026-07-28")
        assert set(validators) == NOTES_TOOLS, sorted(validators)
        ok(f"{version}: notes tools listed (clear_notes and suggest_title too), schemas compile")

        added = await agree(client, validators, "add_note", {"title": "groceries", "body": "eggs, milk", "tags": ["home"]})
        assert not added.is_error, added
        await agree(client, validators, "add_note", {"title": "x", "tags": "home"})
        found = await agree(client, validators, "search", {"query": "milk"})
        assert not found.is_error, found
        assert found.structured_content["matches"][0]["title"] == "groceries", found.structured_content
        ok(f"{version}: notes are added and found; objects are structured content as they are")

        await resources_prompts_completion(client, version, validators, added.structured_content["id"])

        progress = []

        async def on_progress(value, total, message):
            progress.append((value, total, message))

        result = await client.call_tool("reindex", {}, progress_callback=on_progress)
        assert not result.is_error, result
        assert progress and progress[-1][0] == progress[-1][1], progress
        ok(f"{version}: progress notifications reach the caller ({len(progress)})")

        await logging_levels(client, host, version)
        await changes(client, host, version)
        await sampling(client, host, version)
        await elicitation(client, host, version)
        assert host.errors == [], host.errors

    await without_elicitation(params, mode)


async def logging_levels(client, host, version):
    """Logs at `debug`, then at `info`: `search` and `reindex` log at debug
    (and `reindex` its end at info), `add_note` at info. In the handshake
    era the session's level is `logging/setLevel`'s; in 2026-07-28 each
    request asks with `_meta` (none asked: no logs at all)."""
    modern = version == "2026-07-28"
    # No level asked yet (this server then sends none, in either era).
    await add(client, "unheard", "no level asked")
    await client.call_tool("reindex", {})
    await asyncio.sleep(0.2)
    assert host.logs == [], host.logs

    seen = {}
    for level in ("debug", "info"):
        if modern:
            meta = {LOG_LEVEL: level}
        else:
            await client.set_logging_level(level)
            meta = None
        host.logs.clear()
        added = await client.call_tool("add_note", {"title": f"logged at {level}", "body": "log me"}, meta=meta)
        assert not added.is_error, added
        id = added.structured_content["id"]
        found = await client.call_tool("search", {"query": "log me"}, meta=meta)
        assert not found.is_error, found
        total = found.structured_content["total"]
        indexed = await client.call_tool("reindex", {}, meta=meta)
        notes = indexed.structured_content["notes"]

        def messages():
            return [(log.level, log.data.get("message")) for log in host.logs]

        await eventually(
            f"the info logs arrive at {level}",
            lambda: ("info", "note added") in messages() and ("info", "index rebuilt") in messages(),
        )
        await asyncio.sleep(0.2)
        for log in host.logs:
            assert log.logger == "notes", log
            assert isinstance(log.data, dict) and "message" in log.data, log
        [note_added] = [log.data for log in host.logs if log.data["message"] == "note added"]
        assert note_added == {"message": "note added", "id": id}, note_added
        [rebuilt] = [log.data for log in host.logs if log.data["message"] == "index rebuilt"]
        assert rebuilt == {"message": "index rebuilt", "notes": notes}, rebuilt
        searched = [log.data for log in host.logs if log.data["message"] == "searched the notes"]
        indexing = [log.data for log in host.logs if log.data["message"] == "indexed a note"]
        if level == "debug":
            assert searched == [{"message": "searched the notes", "query": "log me", "found": total}], searched
            assert [data["done"] for data in indexing] == list(range(1, notes + 1)), indexing
        else:
            assert searched == [] and indexing == [], host.logs
            assert all(log.level != "debug" for log in host.logs), host.logs
        seen[level] = len(host.logs)
    how = "per-request _meta logLevel" if modern else "set_logging_level"
    ok(
        f"{version}: logs reach logging_callback by {how}: debug and info at debug ({seen['debug']}), "
        f"info only at info ({seen['info']})"
    )


async def changes(client, host, version):
    """Subscribed to one of two notes: deleting both, only its update
    arrives, and the resource list changes."""
    modern = version == "2026-07-28"
    kept, watched = await add(client, "unwatched", "not subscribed"), await add(client, "watched", "subscribed")
    uri = f"notes://{watched}"
    host.notifications.clear()
    if modern:
        async with client.listen(resources_list_changed=True, resource_subscriptions=[uri]) as sub:
            assert sub.honored.resources_list_changed is True, sub.honored
            assert sub.honored.resource_subscriptions == [uri], sub.honored
            assert not sub.honored.tools_list_changed and not sub.honored.prompts_list_changed, sub.honored
            for id in (kept, watched):
                result = await client.call_tool("delete_note", {"id": id})
                assert not result.is_error, result
            events = []
            while ResourceUpdated(uri) not in events or ResourcesListChanged() not in events:
                events.append(await asyncio.wait_for(sub.__anext__(), 10))
            assert ResourceUpdated(f"notes://{kept}") not in events, events
        # What the message_handler saw came from the listen stream, stamped.
        stamped = [n.params.meta for n in host.notifications if n.method.startswith("notifications/resources/")]
        assert stamped and all(meta[SUBSCRIPTION_ID] == sub.subscription_id for meta in stamped), host.notifications
        ok(f"{version}: listen honors resources_list_changed and notes://{{id}}; deleting notes brings the events")
    else:
        await client.subscribe_resource(uri)
        for id in (kept, watched):
            result = await client.call_tool("delete_note", {"id": id})
            assert not result.is_error, result
        await eventually(
            f"{uri} is updated and the list changed", lambda: uri in host.updated() and host.list_changes()
        )
        # The unwatched note went first: its update would have come before.
        assert host.updated() == [uri], host.updated()
        await client.unsubscribe_resource(uri)
        ok(f"{version}: resources/subscribe brings resources/updated for the note deleted and list_changed to message_handler")


async def sampling(client, host, version):
    """`suggest_title` asks the host's model; the tool answers its text."""
    modern = version == "2026-07-28"
    id = await add(client, "stuff to buy", "eggs, milk, flour")
    host.samplings.clear()
    host.sample_answers.append(
        CreateMessageResult(
            role="assistant",
            content=TextContent(type="text", text="  Weekly shopping list\n"),
            model="test-model",
            stop_reason="endTurn",
        )
    )
    result = await client.call_tool("suggest_title", {"id": id})
    assert answer(result, modern) == "Weekly shopping list", result
    [asked] = host.samplings
    assert asked.max_tokens == 60, asked
    assert asked.temperature == 0.3, asked
    assert asked.system_prompt.startswith("You suggest short, specific titles"), asked
    [message] = asked.messages
    assert message.role == "user" and message.content.type == "text", message
    assert "stuff to buy" in message.content.text and "eggs, milk, flour" in message.content.text, message
    unknown = await client.call_tool("suggest_title", {"id": 999999})
    assert unknown.is_error and "No such note" in unknown.content[0].text, unknown
    assert host.samplings == [asked], "an unknown note asks nothing"
    ok(f"{version}: suggest_title asks sampling_callback (maxTokens 60, the note in the message) and answers its text")


async def elicitation(client, host, version):
    """`clear_notes` asks for confirmation: declined, cancelled or not
    confirmed, nothing is deleted (0); confirmed, every note is (count),
    and the subscribed note's update arrives."""
    modern = version == "2026-07-28"
    await add(client, "keep me", "unless confirmed")
    watched = await add(client, "watched", "until cleared")
    uri = f"notes://{watched}"
    before = await count(client)
    for reply in (
        ElicitResult(action="decline"),
        ElicitResult(action="cancel"),
        ElicitResult(action="accept", content={"confirm": False}),
    ):
        host.elicitations.clear()
        host.elicit_answers.append(reply)
        result = await client.call_tool("clear_notes", {})
        assert answer(result, modern) == 0, (reply, result)
        [asked] = host.elicitations
        assert asked.message == f"Delete all {before} notes? This cannot be undone.", asked
        schema = asked.requested_schema
        schema = schema if isinstance(schema, dict) else schema.model_dump(by_alias=True, exclude_none=True)
        assert schema == CONFIRM_SCHEMA, schema
        assert await count(client) == before
    ok(f"{version}: clear_notes asks elicitation_callback; decline, cancel and confirm false delete nothing (0)")

    host.elicit_answers.append(ElicitResult(action="accept", content={"confirm": True}))
    host.notifications.clear()
    if modern:
        async with client.listen(resources_list_changed=True, resource_subscriptions=[uri]) as sub:
            result = await client.call_tool("clear_notes", {})
            events = []
            while ResourceUpdated(uri) not in events or ResourcesListChanged() not in events:
                events.append(await asyncio.wait_for(sub.__anext__(), 10))
    else:
        await client.subscribe_resource(uri)
        result = await client.call_tool("clear_notes", {})
        await eventually(
            f"{uri} is updated and the list changed", lambda: uri in host.updated() and host.list_changes()
        )
        await client.unsubscribe_resource(uri)
    assert answer(result, modern) == before, result
    assert await count(client) == 0
    listing = await client.list_resources(cache_mode="bypass")
    assert listing.resources == [], listing
    ok(f"{version}: accepted with confirm true, clear_notes deletes every note ({before}); the watched one is updated")


async def without_elicitation(params, mode):
    """A client without the elicitation capability: `clear_notes` is a tool
    error naming it, and nothing is deleted."""
    logs = []

    async def on_log(params):
        logs.append(params)

    # No callbacks: the SDK declares neither elicitation nor sampling. In
    # 2026-07-28 `log_level` asks for logs on every request.
    async with Client(params, mode=mode, logging_callback=on_log, log_level="debug") as client:
        version = client.protocol_version
        capabilities = client.session._build_capabilities(version)
        assert capabilities.elicitation is None and capabilities.sampling is None, capabilities
        await add(client, "survivor", "of a refused clear")
        before = await count(client)
        result = await client.call_tool("clear_notes", {})
        assert result.is_error, result
        text = result.content[0].text
        assert "`elicitation` capability" in text and "-32021" in text, text
        assert await count(client) == before
        if version == "2026-07-28":
            await eventually("Client(log_level='debug') brings the search's debug log",
                             lambda: any(log.data.get("message") == "searched the notes" for log in logs))
            how = "; Client(log_level='debug') brings debug logs"
        else:
            await asyncio.sleep(0.2)
            assert logs == [], logs
            how = "; log_level has no effect before setLevel"
        ok(f"{version}: without elicitation_callback clear_notes is a tool error naming the elicitation capability{how}")


async def resources_prompts_completion(client, version, validators, first):
    """Resources, the prompt and completion, with the note `first` (already
    added) and one more. Over HTTP the server outlives a session, so other
    notes may be there too: ids come from the answers."""
    modern = version == "2026-07-28"
    capabilities = client.server_capabilities.model_dump(by_alias=True, exclude_none=True)
    # The same objects from `initialize` and from `server/discover`.
    expected = {
        "tools": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
        "prompts": {"listChanged": True},
        "completions": {},
        "logging": {},
    }
    assert capabilities == expected, capabilities
    ok(f"{version}: capabilities declare tools, resources, prompts, completions and logging, with changes")

    added = await agree(client, validators, "add_note", {"title": "plans", "body": "go *north*"})
    assert not added.is_error, added
    second = added.structured_content["id"]
    notes = {first: ("groceries", "eggs, milk"), second: ("plans", "go *north*")}

    listing = await client.list_resources(cache_mode="bypass")
    listed = {resource.uri: resource for resource in listing.resources}
    for id, (title, _) in notes.items():
        resource = listed.get(f"notes://{id}")
        assert resource is not None, f"notes://{id} is not listed: {sorted(listed)}"
        assert (resource.name, resource.title, resource.mime_type) == (f"note-{id}", title, "text/markdown"), resource
    assert all(uri.startswith("notes://") for uri in listed), sorted(listed)
    assert listing.next_cursor is None, listing
    if modern:
        assert listing.ttl_ms is not None and listing.cache_scope is not None, listing
    ok(f"{version}: resources/list lists every note by title ({len(listing.resources)})")

    templates = await client.list_resource_templates(cache_mode="bypass")
    assert [t.uri_template for t in templates.resource_templates] == ["notes://{id}"], templates
    template = templates.resource_templates[0]
    assert (template.name, template.title, template.mime_type) == ("note", "A note", "text/markdown"), template
    assert template.description.startswith("One note as Markdown"), template
    ok(f"{version}: resources/templates/list has notes://{{id}}")

    read = await client.read_resource(f"notes://{second}", cache_mode="bypass")
    assert len(read.contents) == 1, read
    content = read.contents[0]
    assert content.uri == f"notes://{second}", content
    assert content.mime_type == "text/markdown", content
    assert content.text == "# plans\n\ngo *north*\n", content
    if modern:
        assert read.ttl_ms is not None and read.cache_scope is not None, read
    ok(f"{version}: resources/read answers the note as Markdown")

    try:
        await client.read_resource("notes://999999", cache_mode="bypass")
        raise AssertionError("an unknown note must be an error")
    except MCPError as err:
        assert (err.code, err.message) == (1001, "No such note"), err
    try:
        await client.read_resource("other://1", cache_mode="bypass")
        raise AssertionError("a URI matching no resource must be an error")
    except MCPError as err:
        assert err.code == (-32602 if modern else -32002), err
        assert "other://1" in err.message, err
    ok(f"{version}: reading an unknown note is its error (1001), an unknown URI {-32602 if modern else -32002}")

    prompts = await client.list_prompts(cache_mode="bypass")
    assert [p.name for p in prompts.prompts] == ["summarize_note"], prompts
    prompt = prompts.prompts[0]
    assert prompt.title == "Summarize a note", prompt
    assert [(a.name, a.required) for a in prompt.arguments] == [("id", True)], prompt
    assert prompt.arguments[0].description == "The note's id (`search` finds it).", prompt
    ok(f"{version}: prompts/list has summarize_note with its required argument")

    got = await client.get_prompt("summarize_note", {"id": str(first)})
    assert got.description == f"Summarize note {first}", got
    messages = [(m.role, m.content.type, m.content.text) for m in got.messages]
    assert messages == [
        ("user", "text", "Summarize this note in one sentence:"),
        ("user", "text", "# groceries\n\neggs, milk\n"),
    ], messages
    try:
        await client.get_prompt("summarize_note", {"id": "999999"})
        raise AssertionError("a prompt for an unknown note must be an error")
    except MCPError as err:
        assert (err.code, err.message) == (1001, "No such note"), err
    ok(f"{version}: prompts/get answers the messages with the note")

    ids = {str(id) for id in notes}
    for ref in (PromptReference(name="summarize_note"), ResourceTemplateReference(uri="notes://{id}")):
        for prefix in sorted(ids):
            found = await client.complete(ref, {"name": "id", "value": prefix})
            values = found.completion.values
            assert prefix in values and all(v.startswith(prefix) for v in values), (ref, prefix, found)
            assert found.completion.total == len(values) and found.completion.has_more is False, found
        everything = await client.complete(ref, {"name": "id", "value": ""})
        assert ids <= set(everything.completion.values), everything
        nothing = await client.complete(ref, {"name": "id", "value": "x"})
        assert nothing.completion.values == [], nothing
    ok(f"{version}: completion/complete suggests note ids for the prompt and the template")


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
