"""The official MCP Python SDK, as a real client, against the database example over stdio.

Usage: python_sdk_database.py SERVER_BINARY

Lists resources and templates, reads a template resource, completes a template variable,
gets a prompt with arguments, and runs the read-only query tool. Prints a transcript; exits
non-zero when anything differs from what the example promises.
"""

import sys

import anyio
from mcp import Client, StdioServerParameters
from mcp.types import PromptReference, ResourceTemplateReference


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


async def main(binary: str) -> None:
    async with Client(StdioServerParameters(command=binary, args=[])) as client:
        print(f"connected to {client.server_info.name}, protocol {client.protocol_version}")

        templates = await client.list_resource_templates()
        uris = [t.uri_template for t in templates.resource_templates]
        print(f"resources/templates/list -> {uris}")
        check("sqlite://tables/{table}/ddl" in uris, "the table DDL template is listed")

        resources = await client.list_resources()
        listed = [str(r.uri) for r in resources.resources]
        print(f"resources/list -> {listed}")
        check("sqlite://schema" in listed and "sqlite://tables/orders/ddl" in listed, "schema and tables are listed")

        read = await client.read_resource("sqlite://tables/customers/ddl")
        ddl = read.contents[0].text
        print(f"resources/read sqlite://tables/customers/ddl -> {ddl.splitlines()[0]} …")
        check("CREATE TABLE customers" in ddl, "the DDL of customers")
        check(read.contents[0].mime_type == "text/x-sql", "the declared MIME type")

        completion = await client.complete(
            ResourceTemplateReference(type="ref/resource", uri="sqlite://tables/{table}/ddl"),
            {"name": "table", "value": "p"},
        )
        print(f"completion/complete table='p' -> {completion.completion.values}")
        check(completion.completion.values == ["products"], "table names complete")

        prompts = await client.list_prompts()
        print(f"prompts/list -> {[p.name for p in prompts.prompts]}")
        prompt = await client.get_prompt(
            "review_query", {"query": "SELECT * FROM orders", "table": "orders", "focus": "performance"}
        )
        first = prompt.messages[0].content.text
        print(f"prompts/get review_query -> {len(prompt.messages)} messages; first: {first.splitlines()[0]}")
        check("performance" in first and "SELECT * FROM orders" in first, "the prompt uses its arguments")
        check(prompt.messages[1].content.type == "resource", "the table's DDL is embedded")

        completion = await client.complete(
            PromptReference(type="ref/prompt", name="review_query"), {"name": "table", "value": "o"}
        )
        check(completion.completion.values == ["orders"], "prompt arguments complete")

        result = await client.call_tool("query_database", {"sql": "SELECT count(*) AS n FROM customers"})
        print(f"tools/call query_database -> {result.structured_content}")
        check(result.structured_content == {"columns": ["n"], "rows": [[3]]}, "three customers")

        result = await client.call_tool("query_database", {"sql": "DROP TABLE customers"})
        print(f"tools/call query_database(DROP) -> isError={result.is_error}: {result.content[0].text}")
        check(result.is_error, "writes are refused")

    print("python sdk database client: all checks passed")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
