//! Requests from the server to the client — sampling, elicitation, roots, ping — over real
//! pipes, with this test playing the client: it answers, refuses, cancels, errs, or stays
//! silent, and declares capabilities or not.

use mcp_tests::{StdioServer, assert_valid};
use serde_json::{Value, json};

fn catalogue(env: &[(&str, &str)], capabilities: Value) -> StdioServer {
    let mut server = StdioServer::spawn_with_env(env!("CARGO_BIN_EXE_catalogue").as_ref(), env);
    server.initialize_with("2025-11-25", capabilities);
    server
}

fn everything() -> Value {
    json!({"sampling": {"tools": {}}, "elicitation": {"form": {}, "url": {}}, "roots": {"listChanged": true}})
}

fn call(server: &mut StdioServer, id: i64, name: &str, arguments: Value) {
    server.request(
        id,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    );
}

fn text(response: &Value) -> String {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {response}"))
        .to_owned()
}

#[test]
fn sampling_sends_the_whole_request_and_returns_the_answer() {
    let mut server = catalogue(&[], everything());
    call(
        &mut server,
        1,
        "ask_model",
        json!({"question": "Capital of France?"}),
    );
    let request = server.server_request("sampling/createMessage");
    assert_valid("2025-11-25", "CreateMessageRequest", &request);
    let params = &request["params"];
    assert_eq!(
        params["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Capital of France?"}}])
    );
    assert_eq!(params["systemPrompt"], "Answer briefly.");
    assert_eq!(params["maxTokens"], 50);
    assert_eq!(
        params["modelPreferences"],
        json!({"hints": [{"name": "sonnet"}], "intelligencePriority": 0.8})
    );
    assert_eq!(params["stopSequences"], json!(["\n\n"]));
    assert_eq!(params["includeContext"], "thisServer");
    assert_eq!(params["temperature"], 0.2);
    let answer = json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "test-model", "stopReason": "endTurn"});
    assert_valid("2025-11-25", "CreateMessageResult", &answer);
    server.respond(&request["id"], answer);
    assert_eq!(text(&server.response(1)), "Paris (by test-model)");
}

#[test]
fn a_client_error_is_a_tool_error_naming_it() {
    let mut server = catalogue(&[], everything());
    call(&mut server, 1, "ask_model", json!({"question": "?"}));
    let request = server.server_request("sampling/createMessage");
    server.respond_error(&request["id"], -1, "User rejected sampling request");
    let response = server.response(1);
    assert_eq!(response["result"]["isError"], true);
    assert!(
        text(&response).contains("User rejected sampling request"),
        "{response}"
    );
}

#[test]
fn a_feature_the_client_did_not_declare_is_never_requested() {
    let mut server = catalogue(&[], json!({}));
    for (id, tool, arguments) in [
        (1, "ask_model", json!({"question": "?"})),
        (2, "choose_seat", json!({})),
        (3, "list_roots", json!({})),
        (4, "sign_in", json!({})),
    ] {
        call(&mut server, id, tool, arguments);
        let response = server.response(id);
        assert_eq!(response["result"]["isError"], true, "{tool}");
        assert!(
            text(&response).contains("does not support"),
            "{tool}: {response}"
        );
    }
    assert!(
        server.take_backlog().is_empty(),
        "no request reached the client"
    );

    // Form elicitation without URL mode: the URL mode stays unasked.
    let mut server = catalogue(&[], json!({"elicitation": {}}));
    call(&mut server, 1, "sign_in", json!({}));
    assert!(text(&server.response(1)).contains("elicitation.url"));
}

#[test]
fn elicitation_asks_with_a_schema_and_reads_each_action() {
    let mut server = catalogue(&[], everything());
    call(&mut server, 1, "choose_seat", json!({}));
    let request = server.server_request("elicitation/create");
    assert_valid("2025-11-25", "ElicitRequest", &request);
    let schema = &request["params"]["requestedSchema"];
    assert_eq!(request["params"]["mode"], "form");
    assert_eq!(
        schema["properties"]["name"],
        json!({"type": "string", "description": "Your name."})
    );
    assert_eq!(
        schema["properties"]["seat"]["oneOf"],
        json!([{"const": "window", "title": "By the window"}, {"const": "aisle", "title": "On the aisle"}])
    );
    assert_eq!(
        schema["properties"]["bags"]["default"], 1,
        "SEP-1034 defaults"
    );
    assert_eq!(schema["required"], json!(["name", "seat"]));
    server.respond(
        &request["id"],
        json!({"action": "accept", "content": {"name": "Ada", "seat": "aisle"}}),
    );
    assert_eq!(
        text(&server.response(1)),
        "Ada sits by the aisle with 1 bag(s)"
    );

    for (id, action, outcome) in [(2, "decline", "declined"), (3, "cancel", "cancelled")] {
        call(&mut server, id, "choose_seat", json!({}));
        let request = server.server_request("elicitation/create");
        server.respond(&request["id"], json!({ "action": action }));
        assert_eq!(text(&server.response(id)), outcome);
    }

    // Content that does not fit the schema is refused, not trusted.
    call(&mut server, 4, "choose_seat", json!({}));
    let request = server.server_request("elicitation/create");
    server.respond(
        &request["id"],
        json!({"action": "accept", "content": {"name": "Ada", "seat": "roof"}}),
    );
    let response = server.response(4);
    assert_eq!(response["result"]["isError"], true);
    assert!(text(&response).contains("invalid"), "{response}");
}

#[test]
fn url_elicitation_sends_the_url_and_an_id() {
    let mut server = catalogue(&[], everything());
    call(&mut server, 1, "sign_in", json!({}));
    let request = server.server_request("elicitation/create");
    assert_valid("2025-11-25", "ElicitRequest", &request);
    assert_eq!(request["params"]["mode"], "url");
    assert_eq!(request["params"]["url"], "https://example.com/sign-in");
    assert_eq!(request["params"]["elicitationId"], "sign-in-1");
    server.respond(&request["id"], json!({"action": "accept"}));
    assert_eq!(text(&server.response(1)), "Accept");
}

#[test]
fn an_unanswered_request_times_out_and_is_cancelled_and_a_late_answer_is_harmless() {
    let mut server = catalogue(&[("CLIENT_TIMEOUT_MS", "300")], everything());
    call(&mut server, 1, "ask_model", json!({"question": "?"}));
    let request = server.server_request("sampling/createMessage");
    let response = server.response(1);
    assert_eq!(response["result"]["isError"], true);
    assert!(text(&response).contains("did not answer"), "{response}");
    let cancelled = server
        .take_backlog()
        .into_iter()
        .find(|m| m["method"] == "notifications/cancelled")
        .expect("the server cancels the request it gave up on");
    assert_eq!(cancelled["params"]["requestId"], request["id"]);
    // The answer arrives after all: it is dropped, and the server goes on.
    server.respond(
        &request["id"],
        json!({"role": "assistant", "content": {"type": "text", "text": "late"}, "model": "m"}),
    );
    server.request(2, "ping", json!({}));
    assert_eq!(server.response(2)["result"], json!({}));
}

#[test]
fn roots_are_cached_until_the_client_says_they_changed() {
    let mut server = catalogue(&[], everything());
    call(&mut server, 1, "list_roots", json!({}));
    let request = server.server_request("roots/list");
    assert_valid("2025-11-25", "ListRootsRequest", &request);
    server.respond(
        &request["id"],
        json!({"roots": [{"uri": "file:///tmp/a", "name": "a"}]}),
    );
    assert_eq!(text(&server.response(1)), "file:///tmp/a");

    call(&mut server, 2, "list_roots", json!({}));
    assert_eq!(
        text(&server.response(2)),
        "file:///tmp/a",
        "served from the cache"
    );
    assert!(server.take_backlog().is_empty(), "no second roots/list");

    server.notify("notifications/roots/list_changed", json!({}));
    call(&mut server, 3, "list_roots", json!({}));
    let request = server.server_request("roots/list");
    server.respond(&request["id"], json!({"roots": [{"uri": "file:///tmp/b"}]}));
    assert_eq!(text(&server.response(3)), "file:///tmp/b");
}

#[test]
fn a_path_outside_the_roots_is_a_tool_error_with_a_machine_readable_code() {
    let root = std::env::temp_dir().join(format!("mcp-fence-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let root_uri = format!("file://{}", root.display());
    let mut server = catalogue(&[], everything());
    call(
        &mut server,
        1,
        "resolve_path",
        json!({"path": "notes/today.txt"}),
    );
    let request = server.server_request("roots/list");
    server.respond(&request["id"], json!({"roots": [{"uri": root_uri}]}));
    assert_eq!(text(&server.response(1)), "notes/today.txt");

    call(
        &mut server,
        2,
        "resolve_path",
        json!({"path": "../../etc/passwd"}),
    );
    let response = server.response(2);
    assert_eq!(response["result"]["isError"], true);
    assert!(
        text(&response).contains(&root.display().to_string()),
        "names the allowed root: {response}"
    );
    assert_eq!(
        response["result"]["_meta"]["mcp-runtime/error"]["code"],
        "path_outside_roots"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn the_server_pings_the_client() {
    let mut server = catalogue(&[], json!({}));
    call(&mut server, 1, "ping_client", json!({}));
    let request = server.server_request("ping");
    assert_valid("2025-11-25", "PingRequest", &request);
    server.respond(&request["id"], json!({}));
    assert_eq!(text(&server.response(1)), "pong");
}

#[test]
fn a_cancelled_handler_cancels_its_request_to_the_client() {
    let mut server = catalogue(&[], everything());
    call(&mut server, 1, "ask_model", json!({"question": "?"}));
    let request = server.server_request("sampling/createMessage");
    server.notify("notifications/cancelled", json!({"requestId": 1}));
    let cancelled = loop {
        let m = server
            .recv_line_within(mcp_tests::TIMEOUT)
            .expect("a cancellation");
        if m["method"] == "notifications/cancelled" {
            break m;
        }
    };
    assert_eq!(cancelled["params"]["requestId"], request["id"]);
}
