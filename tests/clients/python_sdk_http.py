"""The official MCP Python SDK, as a real client, against the everything example over
Streamable HTTP.

Usage: python_sdk_http.py URL [legacy]

With `legacy`, the client uses the initialize handshake (and the server asks for elicitation
with a request on the response stream); otherwise it probes `server/discover` and speaks the
stateless era (2026-07-28), where elicitation is a multi round-trip request. Lists and calls
tools, reads a template resource, and completes an elicitation round trip. Prints a
transcript; exits non-zero when anything differs from what the example promises.
"""

import json
import sys

import anyio
import mcp.types as types
from mcp import Client


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


async def main(url: str, mode: str) -> None:
    asked = []

    async def elicitation(context, params):
        asked.append(params)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async with Client(url, elicitation_callback=elicitation, mode=mode) as client:
        print(f"connected to {client.server_info.name}, protocol {client.protocol_version}")
        expected = "2026-07-28" if mode == "auto" else "2025-11-25"
        check(client.protocol_version == expected, f"the {mode} mode speaks {expected}")

        tools = await client.list_tools()
        names = [t.name for t in tools.tools]
        print(f"tools/list -> {len(names)} tools")
        check("test_simple_text" in names and "greet" in names, "the example's tools")

        result = await client.call_tool("greet", {"name": "HTTP"})
        print(f"tools/call greet -> {result.content[0].text}")
        check(result.content[0].text == "Hello, HTTP!", "greet answers")

        templates = await client.list_resource_templates()
        uris = [t.uri_template for t in templates.resource_templates]
        check("test://template/{id}/data" in uris, "the template is listed")
        read = await client.read_resource("test://template/42/data")
        data = json.loads(read.contents[0].text)
        print(f"resources/read test://template/42/data -> {data}")
        check(data["id"] == "42" and data["templateTest"] is True, "the template's variable is bound")

        result = await client.call_tool("test_input_required_result_elicitation", {})
        print(f"tools/call test_input_required_result_elicitation -> {result.content[0].text}")
        check(result.content[0].text == "Hello, Ada!", "the elicitation's answer reached the tool")
        check(len(asked) == 1 and "name" in asked[0].requested_schema["properties"], "one form, asking the name")

    print("python sdk http client: all checks passed")


if __name__ == "__main__":
    mode = "legacy" if len(sys.argv) > 2 and sys.argv[2] == "legacy" else "auto"
    anyio.run(main, sys.argv[1], mode)
