"""The official MCP Python SDK, as a real client with roots, sampling and elicitation
callbacks, against the files example over stdio.

Usage: python_sdk_files.py SERVER_BINARY

Shares a temporary folder as the only root, then lists, reads, summarises (answering the
server's sampling request) and deletes (answering its elicitation) a file, and checks that a
path outside the root is refused. Exits non-zero when anything differs from what the example
promises.
"""

import pathlib
import sys
import tempfile

import anyio
import mcp.types as types
from mcp import Client, StdioServerParameters


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


async def main(binary: str) -> None:
    with tempfile.TemporaryDirectory(prefix="mcp-files-") as folder:
        await run(binary, pathlib.Path(folder).resolve())


async def run(binary: str, workspace: pathlib.Path) -> None:
    (workspace / "notes.txt").write_text("MCP servers expose tools, prompts and resources.\n" * 3)
    (workspace / "docs").mkdir()
    (workspace / "docs" / "guide.md").write_text("# Guide\n")
    asked = {"sampling": [], "elicitation": []}

    async def roots(context):
        return types.ListRootsResult(roots=[types.Root(uri=workspace.as_uri(), name="workspace")])

    async def sampling(context, params):
        asked["sampling"].append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="A note about MCP servers."),
            model="test-model",
            stop_reason="endTurn",
        )

    async def elicitation(context, params):
        asked["elicitation"].append(params)
        return types.ElicitResult(action="accept", content={"confirm": True})

    params = StdioServerParameters(command=binary, args=[])
    async with Client(
        params, list_roots_callback=roots, sampling_callback=sampling, elicitation_callback=elicitation
    ) as client:
        print(f"connected to {client.server_info.name}, protocol {client.protocol_version}")

        listing = await client.call_tool("list_directory", {"recursive": True})
        paths = [e["path"] for e in listing.structured_content["entries"]]
        print(f"list_directory(recursive) -> {paths}")
        check(sorted(paths) == ["docs", "docs/guide.md", "notes.txt"], "the workspace's entries")

        read = await client.call_tool("read_file", {"path": "docs/guide.md"})
        check(read.content[0].text == "# Guide\n", "read_file returns the text")

        summary = await client.call_tool("summarise_file", {"path": "notes.txt", "max_words": 20})
        print(f"summarise_file -> {summary.content[0].text}")
        check(summary.content[0].text == "A note about MCP servers.", "the model's summary")
        check(len(asked["sampling"]) == 1, "one sampling request")
        check("tools, prompts and resources" in asked["sampling"][0].messages[0].content.text, "the file went to the model")

        deleted = await client.call_tool("delete_file", {"path": "notes.txt"})
        print(f"delete_file -> {deleted.content[0].text}")
        check(deleted.content[0].text == "deleted notes.txt", "deleted after confirmation")
        check(not (workspace / "notes.txt").exists(), "the file is gone")
        check("confirm" in asked["elicitation"][0].requested_schema["properties"], "the form asks to confirm")

        refused = await client.call_tool("read_file", {"path": "../../etc/passwd"})
        print(f"read_file(../../etc/passwd) -> isError={refused.is_error}: {refused.content[0].text}")
        check(refused.is_error and str(workspace) in refused.content[0].text, "outside the root is refused")
        meta = refused.meta or {}
        check(meta.get("mcp-runtime/error", {}).get("code") == "path_outside_roots", "with a machine-readable code")

    print("python sdk files client: all checks passed")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
