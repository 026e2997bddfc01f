//! One scenario per method, run under every protocol revision over both transports: stdio at
//! 2024-11-05 to 2026-07-28, Streamable HTTP at 2025-03-26 to 2026-07-28. What a handler
//! returns is the same in every era; what changes is said once per era: the handshake or
//! per-request `_meta`, `resultType` and cache hints, the methods each era has, and the HTTP
//! statuses of stateless errors. Every result is checked against its revision's schema.

use mcp_tests::assert_valid;
use mcp_tests::peer::{MODERN, Peer, Reply, Transport, every_era};
use serde_json::{Value, json};

fn catalogue(transport: Transport, version: &'static str) -> Peer {
    Peer::open(
        env!("CARGO_BIN_EXE_catalogue").as_ref(),
        transport,
        version,
        json!({}),
    )
}

/// Checks a result against its revision's schema and, in the stateless era, that it says it
/// is complete.
fn check_result(peer: &Peer, definition: &str, reply: &Reply) {
    let result = reply.result();
    assert_valid(peer.version, definition, result);
    if peer.is_modern() {
        assert_eq!(
            result["resultType"],
            "complete",
            "{}: {result}",
            peer.label()
        );
    } else {
        assert!(
            result.get("resultType").is_none(),
            "{}: {result}",
            peer.label()
        );
    }
    if let Some(status) = reply.status {
        assert_eq!(status, 200, "{}", peer.label());
    }
}

/// Checks an error's code and, for stateless errors over HTTP, the status that says its kind.
fn check_error(peer: &Peer, reply: &Reply, code: i64, modern_status: u16) {
    assert_eq!(reply.error_code(), code, "{}: {:?}", peer.label(), reply);
    if let Some(status) = reply.status {
        let expected = if peer.is_modern() { modern_status } else { 200 };
        assert_eq!(status, expected, "{}: {:?}", peer.label(), reply);
    }
}

fn names(items: &Value) -> Vec<&str> {
    items
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {items}"))
        .iter()
        .filter_map(|i| i["name"].as_str())
        .collect()
}

#[test]
fn lists_are_served_in_every_era_with_cache_hints_only_in_the_stateless_one() {
    for (transport, version) in every_era() {
        let mut peer = catalogue(transport, version);
        for (method, definition, key) in [
            ("tools/list", "ListToolsResult", "tools"),
            ("prompts/list", "ListPromptsResult", "prompts"),
            ("resources/list", "ListResourcesResult", "resources"),
            (
                "resources/templates/list",
                "ListResourceTemplatesResult",
                "resourceTemplates",
            ),
        ] {
            let reply = peer.call(method, json!({}));
            check_result(&peer, definition, &reply);
            let result = reply.result();
            assert!(
                !result[key].as_array().unwrap().is_empty(),
                "{}: {method}",
                peer.label()
            );
            assert_eq!(
                result.get("ttlMs").is_some(),
                peer.is_modern(),
                "{}: {method}",
                peer.label()
            );
        }
        let tools = peer.call("tools/list", json!({}));
        let tools = names(&tools.result()["tools"]);
        assert!(
            tools.contains(&"fast") && tools.contains(&"route"),
            "{tools:?}"
        );
    }
}

#[test]
fn tool_calls_answer_the_same_in_every_era() {
    for (transport, version) in every_era() {
        let mut peer = catalogue(transport, version);
        let reply = peer.call("tools/call", json!({"name": "fast", "arguments": {}}));
        check_result(&peer, "CallToolResult", &reply);
        assert_eq!(
            reply.result()["content"][0]["text"],
            "fast",
            "{}",
            peer.label()
        );

        let reply = peer.call(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": "soon"}}),
        );
        check_result(&peer, "CallToolResult", &reply);
        assert_eq!(reply.result()["isError"], true, "{}", peer.label());
        let text = reply.result()["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("`ms`"), "{}: {text}", peer.label());

        let reply = peer.call("tools/call", json!({"name": "no_such_tool"}));
        check_error(&peer, &reply, -32602, 200);
    }
}

#[test]
fn prompts_render_the_same_in_every_era() {
    for (transport, version) in every_era() {
        let mut peer = catalogue(transport, version);
        let reply = peer.call(
            "prompts/get",
            json!({"name": "greeting", "arguments": {"name": "Ada"}}),
        );
        check_result(&peer, "GetPromptResult", &reply);
        assert_eq!(
            reply.result()["messages"][0]["content"]["text"],
            "Say hello to Ada.",
            "{}",
            peer.label()
        );
        let reply = peer.call("prompts/get", json!({"name": "greeting", "arguments": {}}));
        check_error(&peer, &reply, -32602, 200);
    }
}

#[test]
fn resources_read_the_same_in_every_era_and_a_missing_one_is_not_found() {
    for (transport, version) in every_era() {
        let mut peer = catalogue(transport, version);
        let reply = peer.call("resources/read", json!({"uri": "test://static-text"}));
        check_result(&peer, "ReadResourceResult", &reply);
        assert_eq!(
            reply.result()["contents"][0]["uri"],
            "test://static-text",
            "{}",
            peer.label()
        );
        let reply = peer.call("resources/read", json!({"uri": "test://items/2/data"}));
        check_result(&peer, "ReadResourceResult", &reply);
        let reply = peer.call("resources/read", json!({"uri": "test://nothing-here"}));
        check_error(&peer, &reply, -32002, 200);
    }
}

#[test]
fn completions_are_offered_in_every_era() {
    for (transport, version) in every_era() {
        let mut peer = catalogue(transport, version);
        let reply = peer.call(
            "completion/complete",
            json!({
                "ref": {"type": "ref/prompt", "name": "code_review"},
                "argument": {"name": "language", "value": "ru"},
            }),
        );
        check_result(&peer, "CompleteResult", &reply);
        assert_eq!(
            reply.result()["completion"]["values"],
            json!(["ruby", "rust"]),
            "{}",
            peer.label()
        );
    }
}

#[test]
fn each_era_has_its_own_lifecycle_methods_and_no_other() {
    for (transport, version) in every_era() {
        let mut peer = catalogue(transport, version);
        if peer.is_modern() {
            let reply = peer.call("server/discover", json!({}));
            check_result(&peer, "DiscoverResult", &reply);
            assert_eq!(reply.result()["supportedVersions"][0], MODERN);
            // The handshake era's methods are gone: 404 with -32601 over HTTP.
            for method in [
                "initialize",
                "ping",
                "logging/setLevel",
                "resources/subscribe",
            ] {
                let reply = peer.call(method, json!({}));
                check_error(&peer, &reply, -32601, 404);
            }
        } else {
            let reply = peer.call("ping", json!({}));
            assert_eq!(reply.result(), &json!({}), "{}", peer.label());
            let reply = peer.call("logging/setLevel", json!({"level": "debug"}));
            assert_eq!(reply.result(), &json!({}), "{}", peer.label());
            let reply = peer.call("resources/subscribe", json!({"uri": "test://watched"}));
            assert_eq!(reply.result(), &json!({}), "{}", peer.label());
            // `initialize` is settled once per session.
            let reply = peer.call(
                "initialize",
                json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}),
            );
            check_error(&peer, &reply, -32600, 200);
            // The stateless era's methods need its `_meta`; without it they are not there.
            for method in ["subscriptions/listen", "tasks/get"] {
                let reply = peer.call(method, json!({}));
                check_error(&peer, &reply, -32601, 200);
            }
            // `server/discover` is how a client finds the stateless era, so it is never
            // served in a session: without `_meta` it is a stateless request missing its
            // metadata, and over HTTP, where the stateless era's headers are checked first,
            // one missing its `Mcp-Method`.
            let reply = peer.call("server/discover", json!({}));
            match reply.status {
                Some(status) => assert_eq!(
                    (reply.error_code(), status),
                    (-32020, 400),
                    "{}: {reply:?}",
                    peer.label()
                ),
                None => assert_eq!(reply.error_code(), -32602, "{}: {reply:?}", peer.label()),
            }
        }
        let reply = peer.call("no/such/method", json!({}));
        check_error(&peer, &reply, -32601, 404);
    }
}

#[test]
fn a_multi_round_trip_request_completes_over_both_transports() {
    for transport in [Transport::Stdio, Transport::Http] {
        let mut peer = Peer::open(
            env!("CARGO_BIN_EXE_catalogue").as_ref(),
            transport,
            MODERN,
            json!({"elicitation": {}}),
        );
        let first = peer.call("tools/call", json!({"name": "choose_seat"}));
        let result = first.result();
        assert_valid(MODERN, "InputRequiredResult", result);
        let (key, request) = result["inputRequests"]
            .as_object()
            .and_then(|m| m.iter().next())
            .expect("one input request");
        assert_eq!(request["method"], "elicitation/create");
        let state = result["requestState"].as_str().expect("a sealed state");
        let answer = json!({
            "action": "accept",
            "content": {"name": "Ada", "seat": "window", "bags": 1},
        });
        let done = peer.call(
            "tools/call",
            json!({
                "name": "choose_seat",
                "inputResponses": {key.clone(): answer},
                "requestState": state,
            }),
        );
        check_result(&peer, "CallToolResult", &done);
        assert_eq!(
            done.result()["content"][0]["text"],
            "Ada sits by the window with 1 bag(s)",
            "{transport:?}"
        );
        // The same state with its payload changed is refused, naming the problem.
        let (payload, tag) = state.split_once('.').unwrap();
        let flipped = if payload.ends_with('A') { 'B' } else { 'A' };
        let forged = format!("{}{flipped}.{tag}", &payload[..payload.len() - 1]);
        let refused = peer.call(
            "tools/call",
            json!({"name": "choose_seat", "inputResponses": {key.clone(): answer}, "requestState": forged}),
        );
        assert_eq!(refused.error_code(), -32602, "{transport:?}: {refused:?}");
    }
}
