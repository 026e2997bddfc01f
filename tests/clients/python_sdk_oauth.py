"""The official MCP Python SDK, as a real client, completing the OAuth flow against the notes
example, whose tokens come from a real authorization server (oauth2-mock-server).

Usage: python_sdk_oauth.py URL ISSUER

The client is given no token: the server's 401 sends it to the protected-resource metadata
(RFC 9728), that to the authorization server's metadata; it registers itself (RFC 7591),
runs the authorization code flow with PKCE, asking for this server as the resource (RFC
8707), and comes back with a JWT the server verifies against the published keys. Then it
uses the notes as the user the authorization server names. Prints a transcript; exits
non-zero when anything differs.
"""

import sys
from urllib.parse import parse_qs, urlparse

import anyio
import httpx2
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata

REDIRECT = "http://127.0.0.1:9/callback"


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


class Memory:
    """Token storage for one run."""

    def __init__(self):
        self.tokens = None
        self.client_info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


async def main(url: str, issuer: str) -> None:
    redirected = {}

    async def redirect_handler(authorization_url: str) -> None:
        # The user's browser: the authorization server approves at once and redirects back.
        check(authorization_url.startswith(f"{issuer}/authorize?"), f"sent to {authorization_url}")
        asked = parse_qs(urlparse(authorization_url).query)
        check(asked.get("resource") == [url], f"the resource asked for is this server: {asked}")
        check(asked.get("code_challenge_method") == ["S256"], "PKCE")
        print(f"authorize: scope={asked.get('scope')} resource={asked.get('resource')}")
        async with httpx2.AsyncClient(follow_redirects=False) as browser:
            answer = await browser.get(authorization_url)
        check(answer.status_code in (302, 303), f"redirected: {answer.status_code}")
        back = parse_qs(urlparse(answer.headers["location"]).query)
        redirected["code"] = back["code"][0]
        redirected["state"] = back.get("state", [None])[0]

    async def callback_handler() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=redirected["code"], state=redirected["state"])

    storage = Memory()
    auth = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="python-sdk-oauth-e2e",
            redirect_uris=[REDIRECT],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )

    # Without the flow, the server refuses.
    async with httpx2.AsyncClient() as bare:
        refused = await bare.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                  headers={"Accept": "application/json, text/event-stream"})
    check(refused.status_code == 401, f"no token is 401: {refused.status_code}")
    check("resource_metadata=" in refused.headers.get("www-authenticate", ""), "the challenge names the metadata")

    async with httpx2.AsyncClient(auth=auth) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            print(f"connected to {client.server_info.name}, protocol {client.protocol_version}")
            check(storage.client_info is not None, "the client registered itself")
            print(f"registered as {storage.client_info.client_id}")
            check(storage.tokens is not None and storage.tokens.access_token.count(".") == 2, "a JWT")
            granted = set((storage.tokens.scope or "").split())
            print(f"granted scopes: {sorted(granted)}")
            check({"notes:read", "notes:write"} <= granted, f"both scopes: {granted}")

            tools = {tool.name for tool in (await client.list_tools()).tools}
            check({"add_note", "list_notes", "delete_note"} <= tools, f"every tool listed: {tools}")
            added = await client.call_tool("add_note", {"title": "from oauth", "body": "signed in"})
            check(not added.is_error, f"add_note: {added.content}")
            note_id = added.structured_content["id"]
            listed = await client.call_tool("list_notes", {})
            check(not listed.is_error, f"list_notes: {listed.content}")
            titles = [n["title"] for n in listed.structured_content["result"]]
            check(titles == ["from oauth"], f"the user's notes: {titles}")
            read = await client.read_resource(f"notes://{note_id}")
            check("signed in" in read.contents[0].text, f"notes://{note_id}")
            print(f"add_note, list_notes, notes://{note_id}: ok as the authorization server's user")
    print("all checks passed")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
