"""Drives two replicas of one MCP server behind a round-robin balancer with
the official Python SDK's Streamable HTTP client, in a handshake-era session
(`initialize`, 2025-11-25): `python mcp_replicas.py URL`. Every request may
reach either replica, so each one works only if the session is found there.
Prints one `ok ...` line per check, then `all checks passed`."""

import asyncio
import sys

from mcp import Client


def ok(what):
    print(f"ok {what}", flush=True)


async def main(url):
    async with Client(url, mode="legacy") as client:
        version = client.protocol_version
        assert version == "2025-11-25", version
        ok(f"initialize negotiates {version}")

        listing = await client.list_tools()
        names = sorted(tool.name for tool in listing.tools)
        assert names == ["add", "replica"], names
        ok("tools/list lists the tools")

        for n in range(5):
            result = await client.call_tool("add", {"a": n, "b": 2})
            assert not result.is_error, result
            assert result.structured_content == {"result": n + 2}, result
        replicas = set()
        for _ in range(6):
            result = await client.call_tool("replica", {})
            assert not result.is_error, result
            replicas.add(result.structured_content["result"])
        assert replicas == {"A", "B"}, replicas
        ok("tools/call is answered by both replicas in one session")

        await client.set_logging_level("debug")
        for n in range(4):
            result = await client.call_tool("add", {"a": n, "b": n})
            assert result.structured_content == {"result": 2 * n}, result
        ok("logging/setLevel, then calls on either replica")

        await client.send_ping()
        ok("ping")
    print("all checks passed", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
