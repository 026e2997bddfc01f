"""The official MCP Python SDK, as a real client, against the notes example over Streamable
HTTP: two users, two sessions each, every one with its own bearer token header.

Usage: python_sdk_notes.py URL

Alice and Bob each add notes; each sees only their own, and the other's note id is "not
found". Each session pins a note of its own: the pins of one session are not the other's,
though the notes are the user's in both. Prints a transcript; exits non-zero when anything
differs from what the example promises.
"""

import json
import sys
from contextlib import AsyncExitStack

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

TOKENS = {"alice": "token-a", "bob": "token-b"}


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


def structured(result):
    check(not result.is_error, f"the call succeeded: {result.content}")
    return result.structured_content


async def connect(stack, url, user):
    http = await stack.enter_async_context(
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKENS[user]}"})
    )
    transport = streamable_http_client(url, http_client=http)
    return await stack.enter_async_context(Client(transport, mode="legacy"))


async def main(url: str) -> None:
    async with AsyncExitStack() as stack:
        sessions = {
            (user, n): await connect(stack, url, user) for user in TOKENS for n in (1, 2)
        }
        first = sessions[("alice", 1)]
        print(f"connected to {first.server_info.name}, protocol {first.protocol_version}")

        ids = {}
        for user in TOKENS:
            for n in (1, 2):
                added = structured(
                    await sessions[(user, n)].call_tool(
                        "add_note", {"title": f"{user} {n}", "body": f"written in session {n}"}
                    )
                )
                ids[(user, n)] = added["id"]
        print(f"add_note -> {ids}")

        for (user, n), client in sessions.items():
            listed = structured(await client.call_tool("list_notes", {}))["result"]
            titles = [note["title"] for note in listed]
            check(titles == [f"{user} 1", f"{user} 2"], f"{user} (session {n}) sees only their notes: {titles}")

        for user, other in (("alice", "bob"), ("bob", "alice")):
            theirs = ids[(other, 1)]
            result = await sessions[(user, 1)].call_tool("get_note", {"id": theirs})
            check(result.is_error, f"{user} cannot read {other}'s note")
            check(result.content[0].text == f"note {theirs} not found", f"as if it never was: {result.content[0].text}")

        note = await sessions[("alice", 2)].read_resource(f"notes://{ids[('alice', 1)]}")
        check(note.contents[0].text.startswith("# alice 1"), "the resource template reads the note")
        prompt = await sessions[("bob", 1)].get_prompt("summarize_notes", {})
        text = prompt.messages[0].content.text
        check("bob 1" in text and "alice" not in text, "the prompt holds bob's notes only")

        # Each session pins a different note of its user's.
        for (user, n), client in sessions.items():
            message = (await client.call_tool("pin", {"id": ids[(user, n)]})).content[0].text
            print(f"{user} session {n}: {message}")
        for (user, n), client in sessions.items():
            pinned = [note["title"] for note in structured(await client.call_tool("pinned", {}))["result"]]
            check(pinned == [f"{user} {n}"], f"{user} session {n} has its own pins: {pinned}")

    print("python sdk notes client: all checks passed")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
