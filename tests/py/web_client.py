"""Calls the calculator example the way clients outside Rust do: HTTP with
the standard library's urllib and http.client, WebSocket with the `websockets` package
(pinned in requirements.txt), including a call from the server back to
this client. Usage: web_client.py HTTP_ADDR WS_ADDR. Exits non-zero, with
the reason on stderr, when anything differs from what is expected."""

import asyncio
import http.client
import json
import sys
import urllib.error
import urllib.request

from websockets.asyncio.client import connect


def post(addr, body, content_type="application/json"):
    request = urllib.request.Request(
        f"http://{addr}/", data=body.encode(), method="POST", headers={"Content-Type": content_type}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def expect(what, got, want):
    if got != want:
        sys.exit(f"{what}: expected {want!r}, got {got!r}")


def check_http(addr):
    status, body = post(addr, '{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}')
    expect("HTTP call", (status, json.loads(body)), (200, {"jsonrpc": "2.0", "result": 19, "id": 1}))
    status, body = post(addr, '[{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"a"},{"jsonrpc":"2.0","method":"notify_hello","params":[7]}]')
    expect("HTTP batch", (status, json.loads(body)), (200, [{"jsonrpc": "2.0", "result": 7, "id": "a"}]))
    status, body = post(addr, '{"jsonrpc":"2.0","method":"notify_hello","params":[7]}')
    expect("HTTP notification", (status, body), (204, ""))
    status, body = post(addr, '{"jsonrpc":"2.0","method":"nope","id":2}')
    expect("HTTP unknown method", (status, json.loads(body)["error"]["code"]), (200, -32601))
    status, _ = post(addr, "{}", content_type="text/plain")
    expect("HTTP text/plain", status, 415)


def check_http_keep_alive(addr):
    """Calls on one kept-alive connection, as http.client makes them (no
    Connection header, unlike urllib): each answered on the same socket."""
    host, port = addr.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    headers = {"Content-Type": "application/json"}
    sock = None
    for i in range(3):
        conn.request("POST", "/", body=f'{{"jsonrpc":"2.0","method":"subtract","params":[{i + 10},{i}],"id":{i}}}', headers=headers)
        response = conn.getresponse()
        body = response.read().decode()
        expect(f"kept-alive call {i}", (response.status, json.loads(body)), (200, {"jsonrpc": "2.0", "result": 10, "id": i}))
        expect(f"kept-alive call {i} headers", (response.getheader("Content-Type"), response.getheader("Date") is not None), ("application/json", True))
        sock = sock or conn.sock
        expect(f"kept-alive call {i} on the first socket", conn.sock is sock, True)
    conn.request("POST", "/", body='{"jsonrpc":"2.0","method":"notify_hello","params":[7]}', headers=headers)
    response = conn.getresponse()
    expect("kept-alive notification", (response.status, response.read().decode()), (204, ""))
    conn.request("POST", "/", body='{"jsonrpc":"2.0","method":"sum","params":[1,2],"id":"last"}', headers=headers)
    response = conn.getresponse()
    expect("kept-alive call after a notification", (response.status, json.loads(response.read().decode())), (200, {"jsonrpc": "2.0", "result": 3, "id": "last"}))
    expect("kept-alive socket at the end", conn.sock is sock, True)
    conn.close()


async def check_ws(addr):
    async with connect(f"ws://{addr}/") as ws:
        await ws.send('{"jsonrpc":"2.0","method":"subtract","params":{"minuend":5,"subtrahend":3},"id":1}')
        expect("WS call", json.loads(await ws.recv()), {"jsonrpc": "2.0", "result": 2, "id": 1})
        # The server calls us back while answering: answer its request.
        await ws.send('{"jsonrpc":"2.0","method":"ask_client","params":["double",[21]],"id":2}')
        callback = json.loads(await ws.recv())
        expect("WS call back method", (callback["method"], callback["params"]), ("double", [21]))
        await ws.send(json.dumps({"jsonrpc": "2.0", "result": 42, "id": callback["id"]}))
        expect("WS answer after call back", json.loads(await ws.recv()), {"jsonrpc": "2.0", "result": 42, "id": 2})
        await ws.send('{"jsonrpc":"2.0","method":"notify_client","params":["hello",{"to":"py"}],"id":3}')
        expect("WS notification", json.loads(await ws.recv()), {"jsonrpc": "2.0", "method": "hello", "params": {"to": "py"}})
        expect("WS answer after notification", json.loads(await ws.recv()), {"jsonrpc": "2.0", "result": None, "id": 3})


def main():
    http_addr, ws_addr = sys.argv[1], sys.argv[2]
    check_http(http_addr)
    check_http_keep_alive(http_addr)
    asyncio.run(check_ws(ws_addr))
    print("ok")


if __name__ == "__main__":
    main()
