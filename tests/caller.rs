//! What a handler learns of its caller, its request and its session, through real
//! transports: the caller server over Streamable HTTP (both eras, with bearer tokens) and over
//! stdio.

use mcp_tests::StdioServer;
use mcp_tests::http::{HttpServer, Session, event_stream, json_body, next_message};
use serde_json::{Value, json};

const TOKENS: &str = "token-a:alice,token-b:bob";

fn caller(env: &[(&str, &str)]) -> HttpServer {
    HttpServer::spawn(env!("CARGO_BIN_EXE_caller").as_ref(), env)
}

/// The structured result of a tool call (wrapped as `{"result": …}`, as it is no object
/// schema).
fn structured(response: &Value) -> &Value {
    &response["result"]["structuredContent"]["result"]
}

#[test]
fn a_handler_sees_its_session_its_caller_and_its_http_request() {
    let server = caller(&[("HTTP_AUTH_TOKENS", TOKENS)]);
    let session = Session::open_with(
        &server,
        "2025-11-25",
        json!({"sampling": {}}),
        Some("token-a"),
    );
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                         "params": {"name": "whoami", "arguments": {}}});
    let response = json_body(session.post(&message).header("X-Probe", "over here").send());
    let me = structured(&response);
    assert_eq!(me["session"], session.id.as_str(), "{response}");
    assert_eq!(me["has_session"], true);
    assert_eq!(me["subject"], "alice");
    assert_eq!(me["scopes"], json!(["mcp"]));
    assert_eq!(me["client"], "http-e2e");
    assert_eq!(me["sampling"], true);
    assert_eq!(me["method"], "POST");
    assert_eq!(me["path"], "/mcp");
    assert_eq!(me["probe"], "over here");
    assert_eq!(
        me["authorization_seen"], false,
        "the token is never handed on"
    );
    assert_eq!(me["peer_is_loopback"], true);

    // Another caller's session is its own.
    let other = Session::open_with(&server, "2025-11-25", json!({}), Some("token-b"));
    let me = other.call(2, "whoami", json!({}));
    assert_eq!(structured(&me)["subject"], "bob");
    assert_eq!(structured(&me)["session"], other.id.as_str());
    assert_eq!(structured(&me)["sampling"], false);
}

#[test]
fn in_the_stateless_era_the_caller_and_client_come_with_each_request() {
    let server = caller(&[("HTTP_AUTH_TOKENS", TOKENS)]);
    let call = |token: &str, client: &str, name: &str| {
        let arguments = if name == "remember" {
            json!({"word": "w"})
        } else {
            json!({})
        };
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": client, "version": "1.0.0"},
        });
        let response = server
            .request("POST", "/mcp")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", name)
            .header("Authorization", &format!("Bearer {token}"))
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                          "params": {"name": name, "arguments": arguments, "_meta": meta}}))
            .send();
        json_body(response)
    };
    let response = call("token-a", "first-client", "whoami");
    let me = structured(&response);
    assert_eq!(me["subject"], "alice");
    assert_eq!(me["client"], "first-client");
    assert_eq!(me["session"], Value::Null);
    assert_eq!(me["has_session"], false);
    assert_eq!(me["path"], "/mcp");
    let me = call("token-b", "second-client", "whoami");
    assert_eq!(structured(&me)["subject"], "bob");
    assert_eq!(structured(&me)["client"], "second-client");
    let refused = call("token-a", "first-client", "remember");
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let text = refused["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("this request has no session"), "{text}");
}

#[test]
fn two_sessions_of_one_user_keep_their_own_store_and_visibility_over_http() {
    let server = caller(&[("HTTP_AUTH_TOKENS", TOKENS)]);
    let one = Session::open_with(&server, "2025-11-25", json!({}), Some("token-a"));
    let two = Session::open_with(&server, "2025-11-25", json!({}), Some("token-a"));
    one.call(1, "remember", json!({"word": "milk"}));
    one.call(2, "remember", json!({"word": "eggs"}));
    two.call(3, "remember", json!({"word": "tea"}));
    assert_eq!(
        structured(&one.call(4, "recall", json!({}))),
        &json!(["milk", "eggs"])
    );
    assert_eq!(
        structured(&two.call(5, "recall", json!({}))),
        &json!(["tea"])
    );

    // The session's own stream hears that its list changed; the other session's does not.
    let mut stream_one = event_stream(one.get().send());
    let mut stream_two = event_stream(two.get().send());
    let unlocked = one.call(6, "unlock", json!({}));
    assert_eq!(
        unlocked["result"]["content"][0]["text"], "true",
        "{unlocked}"
    );
    let notice = next_message(&mut stream_one);
    assert_eq!(notice["method"], "notifications/tools/list_changed");
    let listed = one.request(7, "tools/list", json!({}));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"secret"), "{names:?}");
    assert_eq!(
        one.call(8, "secret", json!({}))["result"]["content"][0]["text"],
        "the cake is in the cupboard"
    );
    let refused = two.call(9, "secret", json!({}));
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    // The second stream stays quiet: a change everyone hears comes to it first.
    let hidden = two.call(10, "hide", json!({"name": "recall"}));
    assert_eq!(hidden["result"]["content"][0]["text"], "true");
    let notice = next_message(&mut stream_two);
    assert_eq!(notice["method"], "notifications/tools/list_changed");
    assert_eq!(two.call(11, "recall", json!({}))["error"]["code"], -32602);
    assert!(one.call(12, "recall", json!({}))["result"].is_object());
}

#[test]
fn over_stdio_the_connection_is_the_one_session() {
    let mut server = StdioServer::spawn(env!("CARGO_BIN_EXE_caller").as_ref());
    server.initialize("2025-11-25");
    server.request(1, "tools/call", json!({"name": "whoami", "arguments": {}}));
    let me = server.response(1);
    let me = structured(&me);
    assert_eq!(me["has_session"], true);
    assert_eq!(me["session"], Value::Null, "stdio has no session id");
    assert_eq!(me["subject"], Value::Null);
    assert_eq!(me["method"], Value::Null, "no HTTP request");
    for (id, word) in [(2, "one"), (3, "two")] {
        server.request(
            id,
            "tools/call",
            json!({"name": "remember", "arguments": {"word": word}}),
        );
        server.response(id);
    }
    server.request(4, "tools/call", json!({"name": "recall", "arguments": {}}));
    assert_eq!(structured(&server.response(4)), &json!(["one", "two"]));
}

#[test]
fn the_rate_limit_counts_each_identity_apart_across_its_sessions() {
    let server = caller(&[("HTTP_AUTH_TOKENS", TOKENS), ("RATE_LIMIT", "4")]);
    // Alice: `initialize` and `notifications/initialized` (never limited) in two sessions,
    // then two calls; her fifth request is refused, in either session.
    let (first, second) = (
        Session::open_with(&server, "2025-11-25", json!({}), Some("token-a")),
        Session::open_with(&server, "2025-11-25", json!({}), Some("token-a")),
    );
    assert_eq!(
        structured(&first.call(1, "whoami", json!({})))["subject"],
        "alice"
    );
    assert_eq!(
        structured(&second.call(2, "whoami", json!({})))["subject"],
        "alice"
    );
    let refused = first.call(3, "whoami", json!({}));
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert_eq!(
        refused["result"]["_meta"]["io.mcp-runtime/error"]["code"],
        "rate_limited"
    );
    let refused = second.request(4, "tools/list", json!({}));
    assert_eq!(refused["error"]["code"], -32029, "{refused}");
    // Bob has a bucket of his own.
    let bob = Session::open_with(&server, "2025-11-25", json!({}), Some("token-b"));
    assert_eq!(
        structured(&bob.call(5, "whoami", json!({})))["subject"],
        "bob"
    );
}

#[test]
fn an_item_whose_scopes_the_token_lacks_is_unlisted_and_asks_the_caller_to_step_up() {
    let server = caller(&[(
        "HTTP_AUTH_TOKENS",
        "token-a:alice:mcp notes:read notes:write,token-b:bob:mcp",
    )]);
    let alice = Session::open_with(&server, "2025-11-25", json!({}), Some("token-a"));
    let bob = Session::open_with(&server, "2025-11-25", json!({}), Some("token-b"));
    let names = |session: &Session<'_>| -> Vec<String> {
        session.request(1, "tools/list", json!({}))["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(names(&alice).contains(&"write_note".to_owned()));
    assert!(
        !names(&bob).contains(&"write_note".to_owned()),
        "left out of bob's list"
    );
    let prompts = bob.request(2, "prompts/list", json!({}));
    assert_eq!(prompts["result"]["prompts"], json!([]), "{prompts}");
    let resources = alice.request(3, "resources/list", json!({}));
    assert_eq!(
        resources["result"]["resources"],
        json!([]),
        "alice is no admin"
    );

    // Alice's call goes through; Bob's is refused with the challenge to step up.
    assert_eq!(
        alice.call(4, "write_note", json!({"text": "x"}))["result"]["content"][0]["text"],
        "wrote x"
    );
    let message = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                         "params": {"name": "write_note", "arguments": {"text": "x"}}});
    let refused = bob.post(&message).send();
    assert_eq!(refused.status, 403, "{refused:?}");
    let challenge = refused.header("www-authenticate").unwrap().to_owned();
    assert!(
        challenge.starts_with("Bearer error=\"insufficient_scope\", scope=\"notes:write\", resource_metadata=\"http://"),
        "{challenge}"
    );
    let body = refused.json();
    assert_eq!(body["error"]["code"], -32031);
    assert_eq!(body["error"]["data"]["scopes"], json!(["notes:write"]));
    let read = alice
        .post(
            &json!({"jsonrpc": "2.0", "id": 6, "method": "resources/read",
                                  "params": {"uri": "caller://admin"}}),
        )
        .send();
    assert_eq!(read.status, 403);
    assert!(
        read.header("www-authenticate")
            .unwrap()
            .contains("scope=\"admin\"")
    );

    // The stateless era is answered the same way.
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
    });
    let refused = server
        .request("POST", "/mcp")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "prompts/get")
        .header("Mcp-Name", "read_notes")
        .header("Authorization", "Bearer token-b")
        .json(&json!({"jsonrpc": "2.0", "id": 7, "method": "prompts/get",
                      "params": {"name": "read_notes", "_meta": meta}}))
        .send();
    assert_eq!(refused.status, 403, "{refused:?}");
    assert!(
        refused
            .header("www-authenticate")
            .unwrap()
            .contains("scope=\"notes:read\"")
    );

    // The protected-resource metadata names every scope the items need.
    let metadata = server
        .request("GET", "/.well-known/oauth-protected-resource/mcp")
        .send()
        .json();
    assert_eq!(
        metadata["scopes_supported"],
        json!(["admin", "ledger:read", "notes:read", "notes:write"])
    );
}

#[test]
fn over_stdio_scopes_are_not_asked_for() {
    let mut server = StdioServer::spawn(env!("CARGO_BIN_EXE_caller").as_ref());
    server.initialize("2025-11-25");
    server.request(
        1,
        "tools/call",
        json!({"name": "write_note", "arguments": {"text": "y"}}),
    );
    assert_eq!(
        server.response(1)["result"]["content"][0]["text"],
        "wrote y"
    );
}

#[test]
fn a_token_in_the_query_string_is_never_accepted() {
    let server = caller(&[("HTTP_AUTH_TOKENS", TOKENS)]);
    let refused = server
        .request("POST", "/mcp?access_token=token-a")
        .header("Accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        )
        .send();
    assert_eq!(refused.status, 401, "{refused:?}");
    let challenge = refused.header("www-authenticate").unwrap();
    assert!(
        challenge.starts_with("Bearer resource_metadata=\"http://"),
        "{challenge}"
    );
}
