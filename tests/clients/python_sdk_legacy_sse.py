"""The official MCP Python SDK, as a real client, over the 2024-11-05 HTTP+SSE transport.

Usage: python_sdk_legacy_sse.py SSE_URL

Connects with `mcp.client.sse.sse_client` to the catalogue server's `/sse` endpoint (the
server was started with `--http`), initializes, lists the tools and calls some: a plain
result, one that reports progress on the way, and a tool error. Prints a transcript; exits
non-zero when anything differs from what the catalogue promises.
"""

import sys

import anyio
from mcp import ClientSession
from mcp.client.sse import sse_client


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


async def main(url: str) -> None:
    progress = []

    async def on_progress(value, total, message):
        progress.append((value, total, message))

    async with sse_client(url, timeout=20, sse_read_timeout=60) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=60) as session:
            init = await session.initialize()
            info = init.server_info
            print(f"connected to {info.name} {info.version}, protocol {init.protocol_version}")
            check(info.name == "mcp-tests", "serverInfo names the catalogue's crate")
            check(init.instructions and "catalogue" in init.instructions, "instructions")

            await session.send_ping()

            tools = await session.list_tools()
            names = [t.name for t in tools.tools]
            print(f"tools/list -> {len(names)} tools")
            check({"fast", "search", "progress", "fail"} <= set(names), "the catalogue's tools")

            result = await session.call_tool("search", {"query": "rust", "limit": 3})
            print(f"tools/call search -> {result.content[0].text}")
            check(not result.is_error and result.content[0].text == "rust (limit 3)", "search answers")

            result = await session.call_tool("progress", {}, progress_callback=on_progress)
            print(f"tools/call progress -> {result.content[0].text}; progress {progress}")
            check(result.content[0].text == "done", "progress answers")
            check([p[0] for p in progress] == [1.0, 2.0, 3.0], "three progress reports, in order")

            result = await session.call_tool("fail", {"reason": "on purpose"})
            print(f"tools/call fail -> isError={result.is_error}: {result.content[0].text}")
            check(result.is_error and "on purpose" in result.content[0].text, "a tool error")

    print("python sdk legacy sse client: all checks passed")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
