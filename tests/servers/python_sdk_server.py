"""A server written with the official MCP Python SDK (`mcp` 2.3.0, `MCPServer`, the former
FastMCP), for tests/interop.rs to run the client (`mcp_runtime::client`) against.

Usage: python_sdk_server.py stdio
       python_sdk_server.py http PORT      (Streamable HTTP at http://127.0.0.1:PORT/mcp)

Offers tools (`add`, with a structured result; `count_to`, reporting progress; `log_twice`,
logging at two levels; `book_seat`, eliciting a seat; `ask_model`, sampling the client's
model; `fail`, a tool error), a prompt with an argument completed by the server, a static
resource and a resource template. The SDK serves both eras: the handshake (2025-11-25 and
earlier) and the stateless 2026-07-28, where elicitation and sampling ride an
`InputRequiredResult` and the client's retry.
"""

import sys
import warnings
from typing import Annotated

from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve, Sample
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types import (
    Completion,
    CompletionArgument,
    CompletionContext,
    CreateMessageResult,
    PromptReference,
    ResourceTemplateReference,
    SamplingMessage,
    TextContent,
)
from pydantic import BaseModel

# Logging is deprecated at 2026-07-28, and still what the handshake era has.
warnings.simplefilter("ignore", MCPDeprecationWarning)

server = MCPServer(
    "python-sdk-interop", version="1.0.0", instructions="A test server.", log_level="WARNING"
)

LANGUAGES = ["python", "rust", "ruby", "typescript"]


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


@server.tool()
async def count_to(n: int, ctx: Context) -> str:
    """Counts to n, reporting progress at every step."""
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, f"step {i} of {n}")
    return f"counted to {n}"


@server.tool()
async def log_twice(ctx: Context) -> str:
    """Logs a debug and a warning message."""
    await ctx.debug("a debug message")
    await ctx.warning("a warning message")
    return "logged"


@server.tool()
def fail() -> str:
    """Always fails."""
    raise ToolError("this tool always fails")


class Seat(BaseModel):
    seat: str
    bags: int


def ask_for_seat() -> Elicit[Seat]:
    return Elicit("Which seat, and how many bags?", Seat)


@server.tool()
def book_seat(seat: Annotated[Seat, Resolve(ask_for_seat)]) -> str:
    """Books the seat the user chooses (asked by elicitation)."""
    return f"booked {seat.seat} with {seat.bags} bags"


def sample_answer(question: str) -> Sample:
    return Sample(
        [SamplingMessage(role="user", content=TextContent(type="text", text=question))],
        max_tokens=50,
    )


@server.tool()
def ask_model(question: str, answer: Annotated[CreateMessageResult, Resolve(sample_answer)]) -> str:
    """Asks the client's model a question (by sampling)."""
    content = answer.content
    text = content.text if isinstance(content, TextContent) else str(content)
    return f"{answer.model} says: {text}"


@server.prompt()
def review(language: str, code: str) -> str:
    """Asks for a review of some code."""
    return f"Please review this {language} code:\n{code}"


@server.resource("config://app", mime_type="application/json")
def app_config() -> str:
    """The application's configuration."""
    return '{"theme": "dark", "retries": 3}'


@server.resource("greeting://{name}", mime_type="text/plain")
def greeting(name: str) -> str:
    """A greeting for someone."""
    return f"Hello, {name}!"


@server.completion()
async def complete(
    ref: PromptReference | ResourceTemplateReference,
    argument: CompletionArgument,
    context: CompletionContext | None,
) -> Completion | None:
    if isinstance(ref, PromptReference) and ref.name == "review" and argument.name == "language":
        values = [v for v in LANGUAGES if v.startswith(argument.value)]
        return Completion(values=values, total=len(values), has_more=False)
    if isinstance(ref, ResourceTemplateReference) and argument.name == "name":
        values = [v for v in ["Ada", "Alan", "Grace"] if v.startswith(argument.value)]
        return Completion(values=values, total=len(values), has_more=False)
    return None


def main() -> None:
    if sys.argv[1:] == ["stdio"]:
        server.run("stdio")
    elif len(sys.argv) == 3 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
