"""One trace across hops, from Python's side (tests/tests/interop/trace_context.rs).

    python otel_trace.py receive
        An OTLP/HTTP receiver (protobuf, as OpenTelemetry's exporters send
        it) on a free local port: prints `listening PORT`, then one JSON
        line per span received: service, name, kind, trace_id, span_id,
        parent_span_id (hex; "" for a root).

    python otel_trace.py call URL OTLP
        A client instrumented with OpenTelemetry's Python SDK: in a span
        of its own, POSTs a JSON-RPC `subtract` to URL with the span's
        context in `traceparent` (the SDK's default W3C propagator), exports
        its span to the OTLP receiver at OTLP, and prints a JSON line with
        the answer, trace_id and span_id.

    python otel_trace.py mcp CALCULATOR OTLP
        The official MCP SDK with OpenTelemetry's SDK installed: in a span
        per session, calls `subtract` on `CALCULATOR --mcp --otlp OTLP`
        over stdio, in auto mode (2026-07-28) then legacy (2025-11-25); the
        SDK sends its client span's context in `params._meta` (SEP-414).
        Prints a JSON line: each mode's negotiated version and trace_id.
"""

import json
import sys
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


PRINTING = threading.Lock()


def receive():
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
        ExportTraceServiceResponse,
    )

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.path != "/v1/traces" or "protobuf" not in self.headers.get("Content-Type", ""):
                self.send_error(415 if self.path == "/v1/traces" else 404)
                return
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            for resource_spans in request.resource_spans:
                service = next(
                    (a.value.string_value for a in resource_spans.resource.attributes if a.key == "service.name"),
                    "",
                )
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        line = {
                            "service": service,
                            "name": span.name,
                            "kind": span.kind,
                            "trace_id": span.trace_id.hex(),
                            "span_id": span.span_id.hex(),
                            "parent_span_id": span.parent_span_id.hex(),
                        }
                        # Requests are handled on threads of their own:
                        # one line at a time, whole.
                        with PRINTING:
                            sys.stdout.write(json.dumps(line) + "\n")
                            sys.stdout.flush()
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"listening {server.server_address[1]}", flush=True)
    server.serve_forever()


def call(url, otlp):
    from opentelemetry import propagate, trace

    provider = tracer_provider("python-client", otlp)
    tracer = trace.get_tracer("otel_trace.py")
    with tracer.start_as_current_span("subtract", kind=trace.SpanKind.CLIENT) as span:
        headers = {"Content-Type": "application/json"}
        propagate.inject(headers)
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "subtract", "params": [42, 23]}).encode()
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        with urllib.request.urlopen(request, timeout=20) as response:
            answer = json.loads(response.read())
        context = span.get_span_context()
        line = {
            "answer": answer,
            "traceparent": headers.get("traceparent"),
            "trace_id": format(context.trace_id, "032x"),
            "span_id": format(context.span_id, "016x"),
        }
    provider.shutdown()
    print(json.dumps(line), flush=True)


def tracer_provider(service, otlp):
    """OpenTelemetry's SDK as the global tracer provider, exporting each
    span to the OTLP receiver at `otlp` as it ends."""
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{otlp}/v1/traces")))
    trace.set_tracer_provider(provider)
    return provider


async def mcp(calculator, otlp):
    """The official MCP SDK, which puts its client span's context in each
    request's `_meta` (SEP-414), calling `calculator --mcp --otlp OTLP`
    over stdio in both eras."""
    from mcp import Client, StdioServerParameters
    from opentelemetry import trace

    provider = tracer_provider("python-mcp", otlp)
    tracer = trace.get_tracer("otel_trace.py")
    sessions = {}
    for mode in ("auto", "legacy"):
        params = StdioServerParameters(command=calculator, args=["--mcp", "--otlp", otlp])
        with tracer.start_as_current_span(f"session {mode}") as span:
            async with Client(params, mode=mode) as client:
                result = await client.call_tool("subtract", {"minuend": 42, "subtrahend": 23})
                assert not result.is_error, result
                version = client.protocol_version
        sessions[mode] = {"version": version, "trace_id": format(span.get_span_context().trace_id, "032x")}
    provider.shutdown()
    print(json.dumps(sessions), flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["receive"]:
        receive()
    elif sys.argv[1:2] == ["call"] and len(sys.argv) == 4:
        call(sys.argv[2], sys.argv[3])
    elif sys.argv[1:2] == ["mcp"] and len(sys.argv) == 4:
        import asyncio

        asyncio.run(mcp(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)
