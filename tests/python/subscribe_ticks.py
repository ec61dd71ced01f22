"""A third-party JSON-RPC client (Python standard library only) that
subscribes to the calculator's `ticks` over TCP, newline-delimited.

Usage: python3 subscribe_ticks.py HOST PORT

It checks the wire shape the way any client would (the subscribe answer,
items as `subscription` notifications, the end notification, unsubscribe
answering true) and prints one JSON line summarising what it saw; the Rust
test that runs it compares that line.
"""

import json
import socket
import sys


class Connection:
    def __init__(self, host, port):
        self.sock = socket.create_connection((host, port), timeout=20)
        self.reader = self.sock.makefile("r", encoding="utf-8", newline="\n")
        self.next_id = 1

    def send(self, method, params):
        request_id = self.next_id
        self.next_id += 1
        message = {"jsonrpc": "2.0", "method": method, "params": params, "id": request_id}
        self.sock.sendall((json.dumps(message) + "\n").encode("utf-8"))
        return request_id

    def receive(self):
        line = self.reader.readline()
        if not line:
            raise RuntimeError("the server closed the connection")
        return json.loads(line)

    def answer(self, request_id, notifications):
        """The response to `request_id`; notifications that come first are kept."""
        while True:
            message = self.receive()
            if message.get("id") == request_id and "method" not in message:
                if "error" in message:
                    raise RuntimeError("error answer: %r" % (message["error"],))
                return message["result"]
            notifications.append(message)


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    conn = Connection(host, port)
    pending = []

    # A subscription the server ends: 3 ticks, then the end.
    subscription = conn.answer(conn.send("ticks", {"count": 3, "interval_ms": 5}), pending)
    items, ended = [], None
    while ended is None:
        message = pending.pop(0) if pending else conn.receive()
        assert message["jsonrpc"] == "2.0" and "id" not in message, message
        assert message["method"] == "subscription", message
        params = message["params"]
        assert params["subscription"] == subscription, message
        if "result" in params:
            items.append(params["result"]["index"])
        else:
            ended = params

    # A subscription the client ends: unsubscribe after two ticks.
    long_running = conn.answer(conn.send("ticks", [1000000, 20]), pending)
    seen = 0
    while seen < 2:
        message = pending.pop(0) if pending else conn.receive()
        if message.get("method") == "subscription" and message["params"]["subscription"] == long_running:
            seen += 1
    unsubscribed = conn.answer(conn.send("unsubscribe_ticks", [long_running]), pending)
    again = conn.answer(conn.send("unsubscribe_ticks", [long_running]), pending)

    print(json.dumps({
        "items": items,
        "end": ended,
        "unsubscribed": unsubscribed,
        "unsubscribed_again": again,
        "distinct_ids": subscription != long_running,
    }, sort_keys=True))


if __name__ == "__main__":
    main()
