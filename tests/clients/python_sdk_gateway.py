"""The official MCP Python SDK, as a real client, against the gateway example over stdio: one
server made of the quickstart example (a child process of the gateway) and the everything
example (over Streamable HTTP).

Usage: python_sdk_gateway.py GATEWAY_BINARY EVERYTHING_URL [legacy]

With `legacy`, the client uses the initialize handshake; otherwise it speaks the stateless
era (2026-07-28). Calls a tool of each mounted server, a tool of everything that asks this
client's model (sampling) and one that asks this client's user (elicitation), both passed on
by the gateway, reads a resource and gets a prompt. Exits non-zero when
anything differs.
"""

import sys

import anyio
import mcp.types as types
from mcp import Client, StdioServerParameters


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


async def main(binary: str, everything: str, mode: str) -> None:
    asked = {"sampling": [], "elicitation": []}

    async def sampling(context, params):
        asked["sampling"].append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="Paris"),
            model="test-model",
            stop_reason="endTurn",
        )

    async def elicitation(context, params):
        asked["elicitation"].append(params)
        return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.com"})

    params = StdioServerParameters(command=binary, args=["--everything", everything])
    async with Client(
        params, sampling_callback=sampling, elicitation_callback=elicitation, mode=mode
    ) as client:
        print(f"connected to {client.server_info.name}, protocol {client.protocol_version}")
        expected = "2026-07-28" if mode == "auto" else "2025-11-25"
        check(client.protocol_version == expected, f"the {mode} mode speaks {expected}")

        names = []
        cursor = None
        while True:
            page = await client.list_tools(cursor=cursor)
            names += [t.name for t in page.tools]
            cursor = page.next_cursor
            if cursor is None:
                break
        print(f"tools/list -> {len(names)} tools")
        check({"quickstart_add", "quickstart_countdown", "everything_test_simple_text", "everything_test_sampling"} <= set(names), "the tools of both servers, prefixed")

        result = await client.call_tool("quickstart_add", {"a": 2, "b": 40})
        print(f"quickstart_add(2, 40) -> {result.content[0].text}")
        check(not result.is_error and result.content[0].text == "42", "the quickstart adds")

        result = await client.call_tool("everything_test_simple_text", {})
        check(result.content[0].text == "This is a simple text response for testing.", "everything answers")

        result = await client.call_tool("everything_test_sampling", {"prompt": "The capital of France?"})
        print(f"everything_test_sampling -> {result.content[0].text}")
        check(result.content[0].text == "LLM response: Paris", "the model of this client answered")
        check(len(asked["sampling"]) >= 1, "the sampling request reached this client")

        result = await client.call_tool("everything_test_elicitation", {"message": "Who are you?"})
        print(f"everything_test_elicitation -> {result.content[0].text}")
        check("ada@example.com" in result.content[0].text, "the user of this client answered")
        check(asked["elicitation"][-1].message == "Who are you?", "the elicitation came through")

        text = await client.read_resource("test://static-text")
        check("static text" in text.contents[0].text.lower(), "a resource of everything")

        prompt = await client.get_prompt("everything_test_simple_prompt", {})
        check(prompt.messages[0].content.text == "This is a simple prompt for testing.", "a prompt of everything")

        print("all checks passed")


if __name__ == "__main__":
    mode = "legacy" if len(sys.argv) > 3 and sys.argv[3] == "legacy" else "auto"
    anyio.run(main, sys.argv[1], sys.argv[2], mode)
