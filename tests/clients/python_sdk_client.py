"""The official MCP Python SDK, as a real client, against a server binary over stdio.

Usage: python_sdk_client.py SERVER_BINARY [legacy]

With `legacy`, the client uses the initialize handshake; otherwise it probes `server/discover`
and speaks the stateless era (2026-07-28) when the server offers it.

Lists the quickstart server's tools and calls them: a plain result, structured output, a tool
error, and a tool that reports progress and logs. Prints a transcript; exits non-zero when
anything differs from what the quickstart server promises.
"""

import sys
import warnings

import anyio
from mcp import Client, StdioServerParameters


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


async def main(binary: str, mode: str) -> None:
    logs = []
    progress = []

    async def on_log(params):
        logs.append((params.level, params.data))

    async def on_progress(value, total, message):
        progress.append((value, total, message))

    params = StdioServerParameters(command=binary, args=[])
    # `log_level` asks for log messages on every stateless-era (2026-07-28) request; the
    # handshake era asks once, with logging/setLevel.
    async with Client(params, logging_callback=on_log, log_level="debug", mode=mode) as client:
        info = client.server_info
        print(f"connected to {info.name} {info.version}, protocol {client.protocol_version}")
        expected = "2026-07-28" if mode == "auto" else "2025-11-25"
        check(client.protocol_version == expected, f"the {mode} mode speaks {expected}")
        check(info.name == "quickstart", "serverInfo names the quickstart crate")
        check(client.instructions and "Arithmetic" in client.instructions, "instructions")

        tools = await client.list_tools()
        names = [t.name for t in tools.tools]
        print(f"tools/list -> {names}")
        check(names == sorted(names), "tools are listed in name order")
        check({"add", "divide", "reverse", "statistics", "countdown"} <= set(names), "every quickstart tool")
        add = next(t for t in tools.tools if t.name == "add")
        check(add.input_schema["required"] == ["a", "b"], "add's schema requires a and b")
        check(add.annotations is not None and add.annotations.read_only_hint, "add is read-only")

        result = await client.call_tool("add", {"a": 2, "b": 40})
        print(f"tools/call add(2, 40) -> {result.content[0].text}")
        check(not result.is_error and result.content[0].text == "42", "2 + 40 = 42")

        result = await client.call_tool("statistics", {"numbers": [1, 2, 3, 6]})
        print(f"tools/call statistics([1,2,3,6]) -> structuredContent {result.structured_content}")
        check(result.structured_content["mean"] == 3.0, "the mean of 1, 2, 3, 6 is 3")

        result = await client.call_tool("divide", {"dividend": 1, "divisor": 0})
        print(f"tools/call divide(1, 0) -> isError={result.is_error}: {result.content[0].text}")
        check(result.is_error and "zero" in result.content[0].text, "division by zero is a tool error")

        result = await client.call_tool("add", {"a": 1, "b": "two"})
        print(f"tools/call add(1, \"two\") -> isError={result.is_error}: {result.content[0].text}")
        check(result.is_error and "`b`" in result.content[0].text, "a bad argument names the field")

        if client.protocol_version != "2026-07-28":
            await client.set_logging_level("debug")
        result = await client.call_tool("countdown", {"from": 3}, progress_callback=on_progress)
        print(f"tools/call countdown(3) -> {result.content[0].text}; progress {progress}; logs {logs}")
        check(result.content[0].text == "counted down from 3", "countdown answers")
        check(len(progress) == 4 and progress[-1][0] == 3.0, "four progress reports")
        check(any(level == "info" and data == "lift-off" for level, data in logs), "the lift-off log message")

    print("python sdk client: all checks passed")


if __name__ == "__main__":
    # logging/setLevel is deprecated from 2026-07-28 on; this session speaks 2025-11-25.
    warnings.filterwarnings("ignore", message="The logging capability is deprecated")
    anyio.run(main, sys.argv[1], "legacy" if sys.argv[2:] == ["legacy"] else "auto")
