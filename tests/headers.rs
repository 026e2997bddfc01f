//! The request metadata headers of the stateless era over Streamable HTTP: `Mcp-Method`,
//! `Mcp-Name` and the `Mcp-Param-{Name}` headers of arguments marked `#[header]` must agree
//! with the body, or the request is refused with 400 and `HeaderMismatch` (-32020) before
//! any handler runs.

use mcp_tests::http::Request;
use mcp_tests::peer::{MODERN, Peer, Transport};
use serde_json::{Value, json};

fn catalogue() -> Peer {
    Peer::open(
        env!("CARGO_BIN_EXE_catalogue").as_ref(),
        Transport::Http,
        MODERN,
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}),
    )
}

fn message(peer: &Peer, id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": peer.params(params)})
}

fn route_call(peer: &Peer, arguments: Value) -> Request {
    peer.http_post(&message(
        peer,
        7,
        "tools/call",
        json!({"name": "route", "arguments": arguments}),
    ))
}

fn accepted(request: Request) -> Value {
    let response = request.send();
    assert_eq!(response.status, 200, "{response:?}");
    let body = response.json();
    assert!(body.get("error").is_none(), "{body}");
    body
}

fn mismatch(request: Request) -> String {
    let response = request.send();
    assert_eq!(response.status, 400, "{response:?}");
    assert_eq!(response.media_type(), Some("application/json"));
    let body = response.json();
    assert_eq!(body["error"]["code"], -32020, "{body}");
    assert_eq!(body["id"], 7, "the refusal names the request: {body}");
    body["error"]["message"].as_str().unwrap().to_owned()
}

#[test]
fn the_mirrored_arguments_are_marked_in_the_schema() {
    let mut peer = catalogue();
    let tools = peer.call("tools/list", json!({}));
    let route = tools.result()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "route")
        .cloned()
        .expect("route is listed");
    let properties = &route["inputSchema"]["properties"];
    assert_eq!(properties["region"]["x-mcp-header"], "Region");
    assert_eq!(properties["shard"]["x-mcp-header"], "Shard");
    assert_eq!(properties["dry_run"]["x-mcp-header"], "Dry-Run");
    // An optional mirrored argument has one primitive type, as clients check.
    assert_eq!(properties["shard"]["type"], "integer");
    assert!(properties["query"].get("x-mcp-header").is_none());
}

#[test]
fn headers_that_say_what_the_body_says_are_accepted() {
    let peer = catalogue();
    let args = json!({"region": "eu-west1", "shard": 42, "dry_run": false, "query": "q"});
    let body = accepted(
        route_call(&peer, args.clone())
            .header("Mcp-Param-Region", "eu-west1")
            .header("mcp-param-shard", "42.0")
            .header("MCP-PARAM-DRY-RUN", "false"),
    );
    assert_eq!(
        body["result"]["content"][0]["text"],
        "q in eu-west1, shard Some(42), dry run Some(false)"
    );
    // Base64 in its sentinel is decoded before the comparison; absent arguments need none.
    let body = accepted(
        route_call(&peer, json!({"region": "Zürich", "query": "q"}))
            .header("Mcp-Param-Region", "=?base64?WsO8cmljaA==?="),
    );
    assert!(
        body["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Zürich")
    );
    // Without both markers a value is literal.
    accepted(
        route_call(&peer, json!({"region": "=?base64?SGVsbG8=", "query": "q"}))
            .header("Mcp-Param-Region", "=?base64?SGVsbG8="),
    );
    // A null argument is not given, so it has no header.
    accepted(
        route_call(&peer, json!({"region": "r", "shard": null, "query": "q"}))
            .header("Mcp-Param-Region", "r"),
    );
}

#[test]
fn a_mirrored_argument_without_its_header_or_with_another_value_is_refused() {
    let peer = catalogue();
    let args = json!({"region": "eu", "shard": 3, "query": "q"});
    let problem = mismatch(route_call(&peer, args.clone()).header("Mcp-Param-Region", "eu"));
    assert!(problem.contains("Mcp-Param-Shard is missing"), "{problem}");
    let problem = mismatch(
        route_call(&peer, args.clone())
            .header("Mcp-Param-Region", "us")
            .header("Mcp-Param-Shard", "3"),
    );
    assert!(problem.contains("Mcp-Param-Region"), "{problem}");
    mismatch(
        route_call(&peer, args.clone())
            .header("Mcp-Param-Region", "eu")
            .header("Mcp-Param-Shard", "4"),
    );
    mismatch(
        route_call(
            &peer,
            json!({"region": "eu", "dry_run": true, "query": "q"}),
        )
        .header("Mcp-Param-Region", "eu")
        .header("Mcp-Param-Dry-Run", "TRUE"),
    );
    // Broken Base64 (no padding, foreign characters) is refused, never guessed at.
    for broken in ["=?base64?ZXU?=", "=?base64?Z!XU=?="] {
        mismatch(
            route_call(&peer, json!({"region": "eu", "query": "q"}))
                .header("Mcp-Param-Region", broken),
        );
    }
    // A header for an argument the call does not have.
    mismatch(
        route_call(&peer, json!({"region": "eu", "query": "q"}))
            .header("Mcp-Param-Region", "eu")
            .header("Mcp-Param-Shard", "1"),
    );
}

#[test]
fn method_and_name_headers_must_agree_with_the_body() {
    let peer = catalogue();
    let call = message(
        &peer,
        7,
        "tools/call",
        json!({"name": "fast", "arguments": {}}),
    );
    mismatch(peer.http_post(&call).header("Mcp-Method", "tools/list"));
    mismatch(peer.http_post(&call).without_header("Mcp-Method"));
    mismatch(peer.http_post(&call).header("Mcp-Name", "slow"));
    mismatch(peer.http_post(&call).without_header("Mcp-Name"));
    accepted(
        peer.http_post(&call)
            .header("Mcp-Name", "=?base64?ZmFzdA==?="),
    );
    let read = message(
        &peer,
        7,
        "resources/read",
        json!({"uri": "test://static-text"}),
    );
    mismatch(peer.http_post(&read).header("Mcp-Name", "test://other"));
    // Task methods are routed by task id.
    let get = message(&peer, 7, "tasks/get", json!({"taskId": "abc"}));
    mismatch(peer.http_post(&get).header("Mcp-Name", "abd"));
    let version = message(&peer, 7, "tools/list", json!({}));
    mismatch(
        peer.http_post(&version)
            .header("MCP-Protocol-Version", "2025-11-25"),
    );
    // `"params": null` is a request without parameters, whose method the header must
    // still name (it is refused for its headers, not for its missing `_meta`).
    let bare = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": null});
    mismatch(peer.http_post(&bare).header("Mcp-Method", "tools/call"));
}
