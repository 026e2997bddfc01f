//! The stateless era (2026-07-28) over real pipes, beside the handshake era on the same
//! process: `server/discover`, per-request `_meta`, `resultType` and cache hints, version
//! errors, and multi round-trip requests with a sealed `requestState`.

use mcp_tests::http::HttpServer;
use mcp_tests::{StdioServer, assert_valid};
use serde_json::{Value, json};

const MODERN: &str = "2026-07-28";

fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "modern-e2e", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

fn catalogue() -> StdioServer {
    StdioServer::spawn(env!("CARGO_BIN_EXE_catalogue").as_ref())
}

fn ask(server: &mut StdioServer, id: i64, method: &str, mut params: Value) -> Value {
    if params.get("_meta").is_none() {
        params["_meta"] = meta(json!({}));
    }
    server.request(id, method, params);
    server.response(id)
}

#[test]
fn discover_describes_the_server_without_a_handshake() {
    let mut server = catalogue();
    let response = ask(&mut server, 1, "server/discover", json!({}));
    assert_valid(MODERN, "DiscoverResultResponse", &response);
    let result = &response["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["supportedVersions"][0], MODERN);
    assert!(
        result["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2025-11-25"))
    );
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "mcp-tests"
    );
    assert!(result["capabilities"]["tools"].is_object());
    assert!(result["ttlMs"].is_u64() && result["cacheScope"].is_string());
}

#[test]
fn every_stateless_result_says_it_is_complete_and_lists_carry_cache_hints() {
    let mut server = catalogue();
    for (i, (method, definition)) in [
        ("tools/list", "ListToolsResultResponse"),
        ("prompts/list", "ListPromptsResultResponse"),
        ("resources/list", "ListResourcesResultResponse"),
        (
            "resources/templates/list",
            "ListResourceTemplatesResultResponse",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let response = ask(&mut server, i as i64 + 1, method, json!({}));
        assert_valid(MODERN, definition, &response);
        assert_eq!(response["result"]["resultType"], "complete", "{method}");
        assert_eq!(response["result"]["ttlMs"], 60000, "{method}");
        assert_eq!(response["result"]["cacheScope"], "public", "{method}");
    }
    let response = ask(&mut server, 10, "tools/call", json!({"name": "fast"}));
    assert_valid(MODERN, "CallToolResultResponse", &response);
    assert_eq!(response["result"]["resultType"], "complete");
    let response = ask(
        &mut server,
        11,
        "resources/read",
        json!({"uri": "test://static-text"}),
    );
    assert_valid(MODERN, "ReadResourceResultResponse", &response);
    assert_eq!(response["result"]["cacheScope"], "private");
    let response = ask(
        &mut server,
        12,
        "prompts/get",
        json!({"name": "greeting", "arguments": {"name": "Ada"}}),
    );
    assert_valid(MODERN, "GetPromptResultResponse", &response);
}

#[test]
fn an_unsupported_version_is_refused_naming_the_supported_ones() {
    let mut server = catalogue();
    let mut m = meta(json!({}));
    m["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let response = ask(&mut server, 1, "tools/list", json!({ "_meta": m }));
    assert_valid(MODERN, "UnsupportedProtocolVersionError", &response);
    assert_eq!(response["error"]["data"]["requested"], "2099-01-01");
    assert_eq!(response["error"]["data"]["supported"][0], MODERN);
}

#[test]
fn both_eras_are_served_by_one_process() {
    let mut server = catalogue();
    let response = ask(&mut server, 1, "tools/call", json!({"name": "fast"}));
    assert_eq!(response["result"]["resultType"], "complete");
    server.initialize("2025-11-25");
    server.request(2, "tools/call", json!({"name": "fast"}));
    let response = server.response(2);
    assert!(
        response["result"].get("resultType").is_none(),
        "a handshake-era result: {response}"
    );
    let response = ask(&mut server, 3, "tools/call", json!({"name": "fast"}));
    assert_eq!(response["result"]["resultType"], "complete");
}

/// Only a `_meta` member named for the revision makes a request stateless: the key's text
/// in a value (a progress token may be any string) leaves the request in its era, over
/// stdio and over HTTP, where the endpoint and the dispatch agree on it.
#[test]
fn the_revision_keys_text_in_a_meta_value_leaves_a_request_in_its_era() {
    let params = json!({"_meta": {"progressToken": "io.modelcontextprotocol/protocolVersion"}});
    let mut server = catalogue();
    server.initialize("2025-11-25");
    server.request(1, "tools/list", params.clone());
    let response = server.response(1);
    assert!(response["result"]["tools"].is_array(), "{response}");
    assert!(response["result"].get("resultType").is_none(), "{response}");

    let http = HttpServer::spawn(env!("CARGO_BIN_EXE_catalogue").as_ref(), &[]);
    let session = mcp_tests::http::Session::open(&http, "2025-11-25");
    let response = session.request(2, "tools/list", params);
    assert!(response["result"]["tools"].is_array(), "{response}");
    assert!(response["result"].get("resultType").is_none(), "{response}");
}

/// A client may write the revision's key with escapes (some serialisers write every `/` as
/// `\/`): it is the same key, and the request is of the 2026-07-28 era over stdio and over
/// HTTP, where the endpoint and the dispatch both find it. Sent in a session of another
/// revision, it disagrees with the session's `MCP-Protocol-Version` and is refused.
#[test]
fn an_escaped_revision_key_makes_a_request_stateless_on_both_transports() {
    let bodies = [
        r#"io.modelcontextprotocol\/protocolVersion"#,
        r#"io.modelcontextprotocol/\u0070rotocolVersion"#,
        r#"\u0069o.modelcontextprotocol\u002FprotocolVersion"#,
    ]
    .map(|key| {
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"static_text","arguments":{{}},"_meta":{{"{key}":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
        )
    });
    let served = |response: &Value| {
        assert_eq!(response["id"], 7, "{response}");
        assert_eq!(response["result"]["resultType"], "complete", "{response}");
        assert!(response["result"]["content"].is_array(), "{response}");
    };

    let mut server = catalogue();
    for body in &bodies {
        server.send_raw(format!("{body}\n").as_bytes());
        served(&server.response(7));
    }

    let http = HttpServer::spawn(env!("CARGO_BIN_EXE_catalogue").as_ref(), &[]);
    let session = mcp_tests::http::Session::open(&http, "2025-11-25");
    for body in &bodies {
        let alone = http
            .request("POST", "/mcp")
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", MODERN)
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", "static_text")
            .body(body.as_bytes())
            .send();
        assert_eq!(alone.status, 200);
        served(&alone.json());

        let in_session = session
            .headers(http.request("POST", "/mcp"))
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .body(body.as_bytes())
            .send();
        assert_eq!(in_session.status, 400, "{body}");
        assert_eq!(in_session.json()["error"]["code"], -32020, "{body}");
    }
}

/// Calls `choose_seat` statelessly and returns the `InputRequiredResult`.
fn seat_input_required(server: &mut StdioServer, id: i64) -> Value {
    let response = ask(
        server,
        id,
        "tools/call",
        json!({"name": "choose_seat", "_meta": meta(json!({"elicitation": {}}))}),
    );
    assert_valid(MODERN, "JSONRPCResultResponse", &response);
    assert_valid(MODERN, "InputRequiredResult", &response["result"]);
    response["result"].clone()
}

#[test]
fn elicitation_is_a_multi_round_trip_with_a_sealed_state() {
    let mut server = catalogue();
    let first = seat_input_required(&mut server, 1);
    assert_eq!(first["resultType"], "input_required");
    let requests = first["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1);
    let (key, request) = requests.iter().next().unwrap();
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(
        request["params"]["requestedSchema"]["required"],
        json!(["name", "seat"])
    );
    let state = first["requestState"].as_str().unwrap();

    let retry = ask(
        &mut server,
        2,
        "tools/call",
        json!({
            "name": "choose_seat",
            "_meta": meta(json!({"elicitation": {}})),
            "inputResponses": { key: {"action": "accept", "content": {"name": "Ada", "seat": "window"}} },
            "requestState": state,
        }),
    );
    assert_valid(MODERN, "CallToolResultResponse", &retry);
    assert_eq!(
        retry["result"]["content"][0]["text"],
        "Ada sits by the window with 1 bag(s)"
    );
}

#[test]
fn a_retry_without_the_answers_asks_again() {
    let mut server = catalogue();
    let first = seat_input_required(&mut server, 1);
    let retry = ask(
        &mut server,
        2,
        "tools/call",
        json!({"name": "choose_seat", "_meta": meta(json!({"elicitation": {}})), "requestState": first["requestState"]}),
    );
    assert_eq!(retry["result"]["resultType"], "input_required", "{retry}");
}

#[test]
fn tampered_and_foreign_states_are_refused() {
    let mut server = catalogue();
    let first = seat_input_required(&mut server, 1);
    let state = first["requestState"].as_str().unwrap();
    let mut tampered = state.to_owned();
    tampered.replace_range(3..4, if &state[3..4] == "A" { "B" } else { "A" });
    for (id, name, state) in [(2, "choose_seat", tampered.as_str()), (3, "sign_in", state)] {
        let response = ask(
            &mut server,
            id,
            "tools/call",
            json!({"name": name, "_meta": meta(json!({"elicitation": {"url": {}}})), "requestState": state}),
        );
        assert_eq!(response["error"]["code"], -32602, "{name}: {response}");
        assert!(
            response["error"]["message"]
                .as_str()
                .unwrap()
                .contains("requestState")
        );
    }
    // A state from another server (another key) is refused as well.
    let mut other = catalogue();
    let response = ask(
        &mut other,
        1,
        "tools/call",
        json!({"name": "choose_seat", "_meta": meta(json!({"elicitation": {}})), "requestState": state}),
    );
    assert_eq!(response["error"]["code"], -32602, "{response}");
}

#[test]
fn a_state_past_the_servers_lifetime_is_refused() {
    let mut server = StdioServer::spawn_with_env(
        env!("CARGO_BIN_EXE_catalogue").as_ref(),
        &[("REQUEST_STATE_LIFETIME_SECS", "3")],
    );
    let first = seat_input_required(&mut server, 1);
    // The state was sealed before this instant.
    let sealed_by = std::time::Instant::now();
    let state = first["requestState"].as_str().unwrap().to_owned();
    let retry = |server: &mut StdioServer, id| {
        ask(
            server,
            id,
            "tools/call",
            json!({"name": "choose_seat", "_meta": meta(json!({"elicitation": {}})), "requestState": state}),
        )
    };
    // Still valid at once (an answer is missing, so it asks again)…
    let fresh = retry(&mut server, 2);
    assert_eq!(fresh["result"]["resultType"], "input_required", "{fresh}");
    // …and refused once its three seconds have passed (expiry is in whole seconds, so it
    // may last up to a second longer). Three, not one: a retry on a busy machine still
    // comes within them.
    std::thread::sleep(
        (sealed_by + std::time::Duration::from_millis(4_100))
            .saturating_duration_since(std::time::Instant::now()),
    );
    let late = retry(&mut server, 3);
    assert_eq!(late["error"]["code"], -32602, "{late}");
    assert!(
        late["error"]["message"]
            .as_str()
            .unwrap()
            .contains("expired"),
        "{late}"
    );
}

#[test]
fn sampling_and_roots_are_round_trips_too_and_undeclared_features_are_not_asked() {
    let mut server = catalogue();
    let response = ask(
        &mut server,
        1,
        "tools/call",
        json!({"name": "ask_model", "arguments": {"question": "2+2?"}, "_meta": meta(json!({"sampling": {}}))}),
    );
    let requests = response["result"]["inputRequests"].as_object().unwrap();
    let (key, request) = requests.iter().next().unwrap();
    assert_eq!(request["method"], "sampling/createMessage");
    assert_eq!(request["params"]["maxTokens"], 50);
    let retry = ask(
        &mut server,
        2,
        "tools/call",
        json!({
            "name": "ask_model", "arguments": {"question": "2+2?"},
            "_meta": meta(json!({"sampling": {}})),
            "inputResponses": { key: {"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m"} },
            "requestState": response["result"]["requestState"],
        }),
    );
    assert_eq!(retry["result"]["content"][0]["text"], "4 (by m)");

    let response = ask(
        &mut server,
        3,
        "tools/call",
        json!({"name": "list_roots", "_meta": meta(json!({"roots": {}}))}),
    );
    assert_eq!(
        response["result"]["inputRequests"]
            .as_object()
            .unwrap()
            .values()
            .next()
            .unwrap()["method"],
        "roots/list"
    );

    let response = ask(
        &mut server,
        4,
        "tools/call",
        json!({"name": "ask_model", "arguments": {"question": "?"}}),
    );
    // A handler that fails for want of an undeclared capability: the request is refused with
    // a `MissingRequiredClientCapabilityError` naming it (2026-07-28).
    assert_eq!(
        response["error"]["code"], -32021,
        "no sampling capability: {response}"
    );
    assert_eq!(
        response["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );
}

#[test]
fn cache_hints_are_the_servers_unless_a_resource_sets_its_own() {
    let mut server = StdioServer::spawn_with_env(
        env!("CARGO_BIN_EXE_catalogue").as_ref(),
        &[
            ("LIST_CACHE_MS", "5000"),
            ("LIST_CACHE_PRIVATE", "1"),
            ("READ_CACHE_MS", "250"),
            ("READ_CACHE_PUBLIC", "1"),
        ],
    );
    for (i, method) in ["tools/list", "prompts/list", "server/discover"]
        .iter()
        .enumerate()
    {
        let response = ask(&mut server, i as i64 + 1, method, json!({}));
        assert_eq!(response["result"]["ttlMs"], 5000, "{method}");
        assert_eq!(response["result"]["cacheScope"], "private", "{method}");
    }
    let read = ask(
        &mut server,
        10,
        "resources/read",
        json!({"uri": "test://static-text"}),
    );
    assert_eq!(read["result"]["ttlMs"], 250);
    assert_eq!(read["result"]["cacheScope"], "public");
    // `#[resource(…, cache(ttl = "1h", public))]` wins over the server's hint.
    let read = ask(
        &mut server,
        11,
        "resources/read",
        json!({"uri": "test://static-binary"}),
    );
    assert_valid(MODERN, "ReadResourceResultResponse", &read);
    assert_eq!(read["result"]["ttlMs"], 3_600_000);
    assert_eq!(read["result"]["cacheScope"], "public");
}

#[test]
fn a_multi_round_trip_retry_is_never_cacheable() {
    let mut server = catalogue();
    let caps = json!({"elicitation": {}});
    let first = ask(
        &mut server,
        1,
        "resources/read",
        json!({"uri": "test://asks-name", "_meta": meta(caps.clone())}),
    );
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert!(
        result.get("ttlMs").is_none(),
        "an interim result carries no hints"
    );
    let key = result["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let done = ask(
        &mut server,
        2,
        "resources/read",
        json!({
            "uri": "test://asks-name",
            "inputResponses": {key: {"action": "accept", "content": {"yes": true}}},
            "requestState": result["requestState"],
            "_meta": meta(caps),
        }),
    );
    assert_valid(MODERN, "ReadResourceResultResponse", &done);
    assert_eq!(done["result"]["contents"][0]["text"], "sure: true");
    assert_eq!(done["result"]["ttlMs"], 0);
    assert_eq!(done["result"]["cacheScope"], "private");
}

/// Request metadata that cannot be read, the `_meta` text of a `tools/list` request: each
/// is refused with -32602, `invalidMeta` naming the field at fault, and a message saying
/// what is wrong. A field given as `null` counts as not given.
fn unreadable_metadata() -> Vec<(String, &'static str, &'static str)> {
    let version = format!(r#""io.modelcontextprotocol/protocolVersion":"{MODERN}""#);
    let info = r#""io.modelcontextprotocol/clientInfo":{"name":"m","version":"1"}"#;
    let capabilities = r#""io.modelcontextprotocol/clientCapabilities":{}"#;
    vec![
        (
            format!("{{{version},{capabilities},{version}}}"),
            "io.modelcontextprotocol/protocolVersion",
            "is given twice in `_meta`",
        ),
        (
            format!(
                r#"{{{version},{capabilities},"io.modelcontextprotocol/other":1,"io.modelcontextprotocol/other":2}}"#
            ),
            "io.modelcontextprotocol/other",
            "is given twice in `_meta`",
        ),
        (
            // A repeated key is named before a field of the wrong type, wherever each is.
            format!(
                r#"{{{version},"io.modelcontextprotocol/clientCapabilities":[],{info},{info}}}"#
            ),
            "io.modelcontextprotocol/clientInfo",
            "is given twice in `_meta`",
        ),
        (
            format!(r#"{{{version},"io.modelcontextprotocol/clientCapabilities":"all"}}"#),
            "io.modelcontextprotocol/clientCapabilities",
            "must be an object, not \"all\"",
        ),
        (
            format!(
                r#"{{{version},{capabilities},"io.modelcontextprotocol/clientInfo":{{"name":"m"}}}}"#
            ),
            "io.modelcontextprotocol/clientInfo",
            "must be an object with `name` and `version`",
        ),
        (
            format!(r#"{{{version},{capabilities},"io.modelcontextprotocol/logLevel":"loud"}}"#),
            "io.modelcontextprotocol/logLevel",
            "must be a log level such as \"info\", not \"loud\"",
        ),
        (
            // Fields of the wrong type are named in a fixed order, not the message's.
            format!(
                r#"{{"io.modelcontextprotocol/logLevel":1,"io.modelcontextprotocol/clientInfo":2,{version},"io.modelcontextprotocol/clientCapabilities":3}}"#
            ),
            "io.modelcontextprotocol/clientCapabilities",
            "must be an object, not 3",
        ),
        (
            format!(r#"{{{version},"io.modelcontextprotocol/clientCapabilities":null}}"#),
            "io.modelcontextprotocol/clientCapabilities",
            "must carry `io.modelcontextprotocol/clientCapabilities`",
        ),
    ]
}

fn check_refusal(response: &Value, field: &str, says: &str, meta: &str) {
    let error = &response["error"];
    assert_eq!(error["code"], -32602, "{meta}: {response}");
    assert_eq!(error["data"]["invalidMeta"], *field, "{meta}: {response}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.contains(says), "{meta}: {response}");
}

/// The `_meta` texts that are not objects.
const NOT_OBJECTS: [&str; 3] = ["[1,2]", "\"x\"", "7"];

#[test]
fn unreadable_request_metadata_is_refused_naming_the_field() {
    let mut server = catalogue();
    let mut cases = unreadable_metadata();
    // Over stdio the revision in `_meta` alone makes a request stateless, however wrong
    // the rest: these are refused as metadata too.
    cases.push((
        r#"{"io.modelcontextprotocol/protocolVersion":5,"io.modelcontextprotocol/clientCapabilities":{}}"#.to_owned(),
        "io.modelcontextprotocol/protocolVersion",
        "must be a protocol revision (a string), not 5",
    ));
    cases.push((
        format!(r#"{{"io.modelcontextprotocol/protocolVersion":null,"io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/x":"{MODERN}"}}"#),
        "io.modelcontextprotocol/protocolVersion",
        "must carry `io.modelcontextprotocol/protocolVersion`",
    ));
    for (id, (meta, field, says)) in cases.iter().enumerate() {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{"_meta":{meta}}}}}"#
        );
        server.send_raw(format!("{line}\n").as_bytes());
        check_refusal(&server.response(id), field, says, meta);
    }
    // `_meta` that is not an object: a server/discover request is stateless whatever it says.
    for (id, meta) in (100..).zip(NOT_OBJECTS) {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"server/discover","params":{{"_meta":{meta}}}}}"#
        );
        server.send_raw(format!("{line}\n").as_bytes());
        check_refusal(
            &server.response(id),
            "_meta",
            "`_meta` must be an object",
            meta,
        );
    }
    // And the server serves on.
    let fine = ask(&mut server, 200, "tools/list", json!({}));
    assert!(fine["result"]["tools"].is_array(), "{fine}");
}

/// Over HTTP the endpoint reads a stateless request's parameters to compare its headers
/// with them, and the dispatch prepares the request from that reading: the same refusals,
/// with 400.
#[test]
fn unreadable_request_metadata_is_refused_the_same_over_http() {
    let server = HttpServer::spawn(env!("CARGO_BIN_EXE_catalogue").as_ref(), &[]);
    let post = |method: &str, meta: &str| {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"{method}","params":{{"_meta":{meta}}}}}"#
        );
        let response = server
            .request("POST", "/mcp")
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", MODERN)
            .header("Mcp-Method", method)
            .body(body)
            .send();
        assert_eq!(response.status, 400, "{meta}: {response:?}");
        response.json()
    };
    for (meta, field, says) in unreadable_metadata() {
        check_refusal(&post("tools/list", &meta), field, says, &meta);
    }
    for meta in NOT_OBJECTS {
        let response = post("server/discover", meta);
        check_refusal(&response, "_meta", "`_meta` must be an object", meta);
    }
}

/// A member the runtime reads given twice in a stateless request's parameters is refused,
/// whatever the method: over HTTP the headers would be compared with one and the request
/// served with the other.
#[test]
fn a_member_the_runtime_reads_given_twice_is_refused() {
    let meta = format!(
        r#"{{"io.modelcontextprotocol/protocolVersion":"{MODERN}","io.modelcontextprotocol/clientCapabilities":{{}}}}"#
    );
    let cases = [
        (
            "tools/list",
            None,
            format!(r#"{{"uri":1,"uri":2,"_meta":{meta}}}"#),
            "uri",
        ),
        (
            "tools/call",
            Some("echo"),
            format!(r#"{{"name":"echo","arguments":{{"text":"a"}},"name":"add","_meta":{meta}}}"#),
            "name",
        ),
        (
            "tools/list",
            None,
            format!(r#"{{"inputResponses":{{}},"inputResponses":{{}},"_meta":{meta}}}"#),
            "inputResponses",
        ),
    ];
    let refused = |response: &Value, member: &str| {
        assert_eq!(response["error"]["code"], -32602, "{member}: {response}");
        let message = response["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&format!("duplicate field `{member}`")),
            "{member}: {response}"
        );
    };
    let mut stdio = catalogue();
    for (id, (method, _, params, member)) in cases.iter().enumerate() {
        let line =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#);
        stdio.send_raw(format!("{line}\n").as_bytes());
        refused(&stdio.response(id), member);
    }
    let http = HttpServer::spawn(env!("CARGO_BIN_EXE_catalogue").as_ref(), &[]);
    for (method, name, params, member) in &cases {
        let mut request = http
            .request("POST", "/mcp")
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", MODERN)
            .header("Mcp-Method", method);
        if let Some(name) = name {
            request = request.header("Mcp-Name", name);
        }
        let body = format!(r#"{{"jsonrpc":"2.0","id":7,"method":"{method}","params":{params}}}"#);
        let response = request.body(body).send();
        // Invalid parameters are a JSON-RPC error, not an HTTP one.
        assert_eq!(response.status, 200, "{member}: {response:?}");
        refused(&response.json(), member);
    }
}
