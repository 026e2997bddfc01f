//! End-to-end over stdio: real server processes spoken to through pipes, as clients do.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use mcp_tests::{StdioServer, assert_valid, workspace_binary};
use serde_json::{Value, json};

fn quickstart() -> StdioServer {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    StdioServer::spawn(PATH.get_or_init(|| workspace_binary("quickstart")))
}

fn catalogue() -> StdioServer {
    StdioServer::spawn(env!("CARGO_BIN_EXE_catalogue").as_ref())
}

fn ready_catalogue() -> StdioServer {
    let mut server = catalogue();
    server.initialize("2025-11-25");
    server
}

fn call(server: &mut StdioServer, id: i64, name: &str, arguments: Value) -> Value {
    server.request(
        id,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    );
    server.response(id)
}

fn error_code(response: &Value) -> i64 {
    response["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error response: {response}"))
}

fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content: {response}"))
}

/// initialize → result → initialized → tools/list → result → tools/call → result.
fn seven_message_flow(name: &str, arguments: Value) -> Value {
    let mut server = quickstart();
    server.request(
        1,
        "initialize",
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "e2e", "version": "1.0.0"},
        }),
    );
    let init = server.response(1);
    assert_valid("2025-11-25", "JSONRPCResponse", &init);
    assert_valid("2025-11-25", "InitializeResult", &init["result"]);
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(init["result"]["serverInfo"]["name"], "quickstart");
    assert!(init["result"]["capabilities"]["tools"].is_object());
    server.notify("notifications/initialized", json!({}));
    server.request(2, "tools/list", json!({}));
    let list = server.response(2);
    assert_valid("2025-11-25", "ListToolsResult", &list["result"]);
    assert!(
        list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "add")
    );
    server.request(
        3,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    );
    let response = server.response(3);
    assert!(
        server.take_backlog().is_empty(),
        "nothing but the three responses"
    );
    response
}

#[test]
fn seven_message_flow_calls_a_tool() {
    let response = seven_message_flow("add", json!({"a": 2, "b": 40}));
    assert_valid("2025-11-25", "CallToolResult", &response["result"]);
    assert_eq!(
        response["result"],
        json!({"content": [{"type": "text", "text": "42"}]})
    );
}

#[test]
fn seven_message_flow_with_an_unknown_tool_is_invalid_params() {
    let response = seven_message_flow("no_such_tool", json!({}));
    assert_eq!(error_code(&response), -32602);
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no_such_tool")
    );
}

#[test]
fn seven_message_flow_with_bad_arguments_is_a_tool_error_naming_the_field() {
    let response = seven_message_flow("add", json!({"a": 1, "b": "two"}));
    assert_eq!(response["result"]["isError"], true);
    let message = text(&response);
    assert!(
        message.contains("`b`") && message.contains("i64"),
        "{message}"
    );

    let response = seven_message_flow("add", json!({"a": 1}));
    assert_eq!(response["result"]["isError"], true);
    assert!(
        text(&response).contains("missing field `b`"),
        "{}",
        text(&response)
    );

    let response = seven_message_flow("add", json!({"a": 1, "b": 2, "c": 3}));
    assert_eq!(response["result"]["isError"], true);
    assert_eq!(
        text(&response),
        "invalid arguments: unknown argument `c`; expected `a`, `b`"
    );
}

#[test]
fn a_misspelt_argument_of_an_argument_struct_is_a_tool_error_naming_the_closest_one() {
    let mut server = ready_catalogue();
    let response = call(&mut server, 2, "search", json!({"query": "e", "limt": 1}));
    assert_eq!(response["result"]["isError"], true, "{response}");
    assert_eq!(
        text(&response),
        "invalid arguments: unknown argument `limt`; did you mean `limit`?"
    );
    let response = call(&mut server, 3, "search", json!({"query": "e", "limit": 1}));
    assert_eq!(text(&response), "e (limit 1)");
}

#[test]
fn a_misspelt_field_inside_an_argument_is_a_tool_error_with_its_path() {
    let mut server = ready_catalogue();
    let response = call(
        &mut server,
        2,
        "count_nodes",
        json!({"tree": {"label": "a", "children": [{"label": "b", "chidren": []}]}}),
    );
    assert_eq!(response["result"]["isError"], true, "{response}");
    assert_eq!(
        text(&response),
        "invalid arguments: `tree.children[0]`: unknown field `chidren`; did you mean `children`?"
    );
}

/// A map or a free-form argument would keep one of a repeated key's values, and a reader
/// that keeps the other would see another call: the repeat is a tool error naming it.
#[test]
fn a_key_repeated_inside_an_argument_is_a_tool_error_with_its_path() {
    let mut server = ready_catalogue();
    let arguments = |counts: &str, anything: &str| {
        format!(
            r#"{{"integer":1,"small":1,"float":1,"flag":true,"text":"t","words":[],"colour":"red","point":{{"x":0,"y":0}},"counts":{counts},"anything":{anything}}}"#
        )
    };
    for (id, (counts, anything, named)) in [
        (r#"{"a":1,"a":2}"#, "null", "`counts`: duplicate field `a`"),
        (
            r#"{}"#,
            r#"[{"k":1,"\u006b":2}]"#,
            "`anything[0]`: duplicate field `k`",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"every_parameter","arguments":{}}}}}"#,
            arguments(counts, anything)
        );
        server.send_raw(format!("{line}\n").as_bytes());
        let response = server.response(id);
        assert_eq!(response["result"]["isError"], true, "{response}");
        assert_eq!(text(&response), format!("invalid arguments: {named}"));
    }
}

#[test]
fn a_prompt_argument_given_twice_is_invalid_params_naming_it() {
    let mut server = ready_catalogue();
    for (id, arguments) in [
        (1, r#"{"base_branch":"main","base_branch":"evil"}"#),
        (2, r#"{"base_branch":"main","base_\u0062ranch":"evil"}"#),
    ] {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"prompts/get","params":{{"name":"code_review","arguments":{arguments}}}}}"#
        );
        server.send_raw(format!("{line}\n").as_bytes());
        let response = server.response(id);
        assert_eq!(error_code(&response), -32602, "{response}");
        assert!(
            response["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("`base_branch` is given twice")),
            "{response}"
        );
    }
    // Given once, the prompt is made; a value that is not text is still named.
    server.send_raw(
        br#"{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"code_review","arguments":{"base_branch":"main"}}}
"#,
    );
    let made = server.response(3);
    assert!(made["result"]["messages"].is_array(), "{made}");
    server.request(
        4,
        "prompts/get",
        json!({"name": "code_review", "arguments": {"base_branch": 7}}),
    );
    let refused = server.response(4);
    assert_eq!(error_code(&refused), -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`base_branch`"),
        "{refused}"
    );
}

#[test]
fn arguments_that_are_not_an_object_are_refused_without_generated_names() {
    let mut server = ready_catalogue();
    for (id, tool) in [(2, "count_nodes"), (3, "search")] {
        let response = call(&mut server, id, tool, json!([]));
        assert_eq!(response["result"]["isError"], true, "{response}");
        let message = text(&response);
        assert_eq!(
            message,
            "invalid arguments: the arguments must be an object of named arguments (`{\"name\": value}`), not an array"
        );
        assert!(!message.contains("__mcp"), "{message}");
    }
}

#[test]
fn seven_message_flow_with_a_business_failure_is_a_tool_error() {
    let response = seven_message_flow("divide", json!({"dividend": 1, "divisor": 0}));
    assert_valid("2025-11-25", "CallToolResult", &response["result"]);
    assert_eq!(response["result"]["isError"], true);
    assert!(text(&response).contains("cannot divide by zero"));
}

#[test]
fn invalid_json_is_a_parse_error_with_a_null_id() {
    let mut server = ready_catalogue();
    server.send_raw(b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \n");
    server.send_raw(b"\xff\xfe not utf-8\n");
    server.send_raw(
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xff\"}}\n",
    );
    for _ in 0..3 {
        let response = server.recv();
        assert_eq!(error_code(&response), -32700, "{response}");
        assert_eq!(response["id"], Value::Null);
    }
    server.request(9, "ping", json!({}));
    assert_eq!(server.response(9)["result"], json!({}));
}

#[test]
fn malformed_envelopes_are_invalid_requests() {
    let mut server = ready_catalogue();
    let cases: &[(&str, Value)] = &[
        (r#"{"id":1,"method":"ping"}"#, json!(1)),
        (r#"{"jsonrpc":"1.0","id":2,"method":"ping"}"#, json!(2)),
        (r#"{"jsonrpc":"2.0","id":3}"#, json!(3)),
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            Value::Null,
        ),
        (r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#, Value::Null),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"ping","params":[1]}"#,
            json!(4),
        ),
        (r#"42"#, Value::Null),
        (r#"[{"jsonrpc":"2.0","id":5,"method":"ping"}]"#, Value::Null),
        (
            r#"{"jsonrpc":"2.0","id":6,"method":"ping","result":{}}"#,
            json!(6),
        ),
    ];
    for (raw, id) in cases {
        server.send_raw(format!("{raw}\n").as_bytes());
        let response = server.recv();
        assert_eq!(error_code(&response), -32600, "{raw} → {response}");
        assert_eq!(&response["id"], id, "{raw}");
    }
}

#[test]
fn batches_are_answered_under_2025_03_26() {
    let mut server = catalogue();
    server.initialize("2025-03-26");
    server.send_raw(
        br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fast"}}]
"#,
    );
    let batch = server.recv();
    assert_eq!(
        batch,
        json!([
            {"jsonrpc": "2.0", "id": 1, "result": {}},
            {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "fast"}]}},
        ])
    );
    server.send_raw(b"[]\n");
    assert_eq!(error_code(&server.recv()), -32600);
}

/// The 2026-07-28 era has no batches, and over HTTP a request of it is held to the headers
/// that name it only when it comes alone: inside a batch it is refused, never served, and
/// the batch's other items are answered.
#[test]
fn a_request_of_the_stateless_era_in_a_batch_is_refused_and_the_rest_answered() {
    let mut server = catalogue();
    server.initialize("2025-03-26");
    server.send_raw(
        br#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fast","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}},{"jsonrpc":"2.0","id":2,"method":"server/discover"},{"jsonrpc":"2.0","id":3,"method":"ping"}]
"#,
    );
    let batch = server.recv();
    assert_eq!(error_code(&batch[0]), -32600, "{batch}");
    assert_eq!(batch[0]["id"], 1, "{batch}");
    assert_eq!(error_code(&batch[1]), -32600, "{batch}");
    assert_eq!(batch[1]["id"], 2, "{batch}");
    assert_eq!(batch[2], json!({"jsonrpc": "2.0", "id": 3, "result": {}}));
    assert_eq!(batch.as_array().map(Vec::len), Some(3), "{batch}");
}

#[test]
fn unknown_methods_are_method_not_found_and_unknown_notifications_are_ignored() {
    let mut server = ready_catalogue();
    server.notify("notifications/unheard_of", json!({}));
    server.request(1, "no_such/method", json!({}));
    let response = server.response(1);
    assert_eq!(error_code(&response), -32601);
    assert!(server.take_backlog().is_empty());
}

#[test]
fn malformed_params_are_invalid_params() {
    let mut server = ready_catalogue();
    server.request(1, "tools/call", json!({"arguments": {}}));
    assert_eq!(error_code(&server.response(1)), -32602);
    server.request(2, "tools/call", json!({"name": 7}));
    assert_eq!(error_code(&server.response(2)), -32602);
    server.request(3, "logging/setLevel", json!({"level": "loud"}));
    assert_eq!(error_code(&server.response(3)), -32602);
    server.request(4, "initialize", json!({"protocolVersion": "2025-11-25"}));
    assert_eq!(error_code(&server.response(4)), -32602);
}

#[test]
fn an_unserialisable_result_is_an_internal_error() {
    let mut server = ready_catalogue();
    let response = call(&mut server, 1, "broken", json!({}));
    assert_eq!(error_code(&response), -32603);
    assert_eq!(
        call(&mut server, 2, "fast", json!({}))["result"]["content"][0]["text"],
        "fast"
    );
}

#[test]
fn requests_before_initialize_are_refused_but_ping_is_answered() {
    let mut server = catalogue();
    server.request(1, "tools/list", json!({}));
    let response = server.response(1);
    assert_eq!(error_code(&response), -32600);
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initialize")
    );
    server.request(2, "ping", json!({}));
    assert_eq!(server.response(2)["result"], json!({}));
    server.initialize("2025-11-25");
    server.request(3, "tools/list", json!({}));
    assert!(server.response(3)["result"]["tools"].is_array());
}

#[test]
fn a_second_initialize_is_refused() {
    let mut server = ready_catalogue();
    server.request(1, "initialize", json!({
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}
    }));
    assert_eq!(error_code(&server.response(1)), -32600);
}

#[test]
fn initialize_answers_a_supported_version_and_otherwise_the_latest() {
    for (asked, answered) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2099-01-01", "2025-11-25"),
    ] {
        let mut server = catalogue();
        let response = server.initialize(asked);
        assert_eq!(
            response["result"]["protocolVersion"], answered,
            "asked {asked}"
        );
        let version = if asked == "2099-01-01" {
            "2025-11-25"
        } else {
            asked
        };
        assert_valid(version, "InitializeResult", &response["result"]);
    }
}

#[test]
fn ids_are_echoed_as_sent() {
    let mut server = ready_catalogue();
    for id in [
        json!("a-string"),
        json!(""),
        json!(-5),
        json!(9007199254740993_i64),
        json!("é\"\\"),
    ] {
        server.request(id.clone(), "ping", json!({}));
        assert_eq!(server.response(id.clone())["id"], id);
    }
}

#[test]
fn a_slow_call_does_not_hold_up_a_fast_one() {
    let mut server = ready_catalogue();
    // A call that lasts until it is cancelled: the fast one cannot be answered after it.
    server.request(1, "tools/call", json!({"name": "hold"}));
    server.request(2, "tools/call", json!({"name": "fast"}));
    let first = server.recv();
    assert_eq!(first["id"], 2, "the fast call answers first: {first}");
    assert_eq!(first["result"]["content"][0]["text"], "fast");
    server.notify("notifications/cancelled", json!({"requestId": 1}));
}

#[test]
fn a_cancelled_call_is_never_answered_and_the_server_goes_on() {
    let mut server = ready_catalogue();
    server.request(
        1,
        "tools/call",
        json!({"name": "sleep", "arguments": {"ms": 60000}}),
    );
    server.request(2, "ping", json!({}));
    server.response(2);
    server.notify(
        "notifications/cancelled",
        json!({"requestId": 1, "reason": "changed my mind"}),
    );
    // Cancelling something unknown or already finished is harmless.
    server.notify("notifications/cancelled", json!({"requestId": 99}));
    server.request(3, "tools/call", json!({"name": "fast"}));
    assert_eq!(server.response(3)["result"]["content"][0]["text"], "fast");
    // The id of a cancelled request may be used again.
    server.request(1, "tools/call", json!({"name": "fast"}));
    assert_eq!(server.response(1)["result"]["content"][0]["text"], "fast");
    assert!(
        server
            .recv_line_within(Duration::from_millis(300))
            .is_none()
    );
    assert!(server.take_backlog().is_empty());
}

#[test]
fn a_duplicate_id_in_flight_is_refused() {
    let mut server = ready_catalogue();
    // In flight until it is cancelled, however slow the machine.
    server.request(1, "tools/call", json!({"name": "hold"}));
    server.request(1, "tools/call", json!({"name": "fast"}));
    let refused = server.recv();
    assert_eq!(error_code(&refused), -32600, "{refused}");
    server.notify("notifications/cancelled", json!({"requestId": 1}));
    // Its id is free again once the first call is over.
    let deadline = std::time::Instant::now() + mcp_tests::TIMEOUT;
    loop {
        server.request(1, "tools/call", json!({"name": "fast"}));
        let response = server.response(1);
        if response.get("result").is_some() {
            assert_eq!(response["result"]["content"][0]["text"], "fast");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{response}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn end_of_input_finishes_calls_in_flight_and_exits_zero() {
    let mut server = ready_catalogue();
    server.request(
        1,
        "tools/call",
        json!({"name": "sleep", "arguments": {"ms": 300}}),
    );
    server.close_stdin();
    assert_eq!(
        server.response(1)["result"]["content"][0]["text"],
        "slept 300 ms"
    );
    assert!(server.wait().success());
}

#[test]
fn a_panicking_tool_is_a_tool_error_and_the_server_keeps_serving() {
    let mut server = ready_catalogue();
    let response = call(&mut server, 1, "explode", json!({}));
    assert_eq!(response["result"]["isError"], true);
    assert!(text(&response).contains("explode"));
    assert!(
        !text(&response).contains("the tool exploded"),
        "panic messages stay in the server's log"
    );
    assert_eq!(
        call(&mut server, 2, "fast", json!({}))["result"]["content"][0]["text"],
        "fast"
    );
}

#[test]
fn progress_is_reported_only_for_a_progress_token() {
    let mut server = ready_catalogue();
    server.request(
        1,
        "tools/call",
        json!({"name": "progress", "_meta": {"progressToken": "tok"}}),
    );
    server.response(1);
    let notes = server.take_backlog();
    assert_eq!(notes.len(), 3, "{notes:?}");
    for (i, note) in notes.iter().enumerate() {
        assert_valid("2025-11-25", "ProgressNotification", note);
        assert_eq!(note["params"]["progressToken"], "tok");
        assert_eq!(note["params"]["progress"], (i + 1) as f64);
        assert_eq!(note["params"]["total"], 3.0);
    }
    server.request(2, "tools/call", json!({"name": "progress"}));
    server.response(2);
    assert!(server.take_backlog().is_empty());
}

/// When standard output is not a pipe (a socket here) a thread writes it: frames keep the
/// order they were made in there too, a handler's notifications before its response, and
/// replies made at once in the order of their requests.
#[cfg(unix)]
#[test]
fn frames_keep_their_order_when_standard_output_is_written_by_a_thread() {
    let mut server =
        StdioServer::spawn_with_socket_stdout(env!("CARGO_BIN_EXE_catalogue").as_ref());
    server.initialize("2025-11-25");
    server.request(
        1,
        "tools/call",
        json!({"name": "progress", "_meta": {"progressToken": "tok"}}),
    );
    server.response(1);
    let progress: Vec<Value> = server
        .take_backlog()
        .iter()
        .map(|n| n["params"]["progress"].clone())
        .collect();
    assert_eq!(progress, [json!(1.0), json!(2.0), json!(3.0)]);
    // Many calls written at once: each answered, in order, none lost.
    for id in 10..60 {
        server.request(
            id,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": id.to_string()}}),
        );
    }
    for id in 10..60 {
        let response = server.recv();
        assert_eq!(response["id"], id, "{response}");
    }
}

#[test]
fn log_messages_honour_the_level_the_client_set() {
    let mut server = ready_catalogue();
    call(&mut server, 1, "log", json!({}));
    let levels: Vec<Value> = server
        .take_backlog()
        .iter()
        .map(|n| n["params"]["level"].clone())
        .collect();
    assert_eq!(levels, [json!("info"), json!("error")]);

    server.request(2, "logging/setLevel", json!({"level": "debug"}));
    assert_eq!(server.response(2)["result"], json!({}));
    call(&mut server, 3, "log", json!({}));
    let notes = server.take_backlog();
    for note in &notes {
        assert_valid("2025-11-25", "LoggingMessageNotification", note);
    }
    assert_eq!(notes.len(), 3);

    server.request(4, "logging/setLevel", json!({"level": "error"}));
    server.response(4);
    call(&mut server, 5, "log", json!({}));
    let notes = server.take_backlog();
    assert_eq!(notes.len(), 1);
    assert_eq!(
        notes[0]["params"]["data"],
        json!({"error": "an error message"})
    );
}

#[test]
fn tools_list_pages_follow_the_cursor() {
    let mut server = StdioServer::spawn_with_env(
        env!("CARGO_BIN_EXE_catalogue").as_ref(),
        &[("PAGE_SIZE", "4")],
    );
    server.initialize("2025-11-25");
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    for id in 1.. {
        let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
        server.request(id, "tools/list", params);
        let page = server.response(id);
        let tools = page["result"]["tools"].as_array().unwrap();
        assert!(tools.len() <= 4);
        names.extend(tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()));
        match page["result"]["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(names, sorted, "every tool once, in name order");
    assert!(names.len() > 8);

    server.request(100, "tools/list", json!({"cursor": "not-a-cursor"}));
    assert_eq!(error_code(&server.response(100)), -32602);
}

#[test]
fn a_page_as_large_as_usize_holds_serves_every_list_from_a_cursor() {
    let mut server = StdioServer::spawn_with_env(
        env!("CARGO_BIN_EXE_catalogue").as_ref(),
        &[("PAGE_SIZE", &usize::MAX.to_string())],
    );
    server.initialize("2025-11-25");
    server.request(1, "tools/list", json!({}));
    let all = server.response(1)["result"]["tools"]
        .as_array()
        .unwrap()
        .len();
    for (id, method, key) in [
        (2, "tools/list", "tools"),
        (3, "prompts/list", "prompts"),
        (4, "resources/list", "resources"),
        (5, "resources/templates/list", "resourceTemplates"),
    ] {
        server.request(id, method, json!({"cursor": "i1"}));
        let page = server.response(id);
        let items = page["result"][key]
            .as_array()
            .unwrap_or_else(|| panic!("{page}"));
        assert!(page["result"]["nextCursor"].is_null(), "{page}");
        if key == "tools" {
            assert_eq!(items.len(), all - 1, "every tool but the first");
        }
    }
    server.request(6, "ping", json!({}));
    assert_eq!(server.response(6)["result"], json!({}));
}

#[test]
fn an_oversized_message_is_refused_and_the_next_one_served() {
    let mut server = StdioServer::spawn_with_env(
        env!("CARGO_BIN_EXE_catalogue").as_ref(),
        &[("MAX_MESSAGE_BYTES", "1000")],
    );
    server.initialize("2025-11-25");
    let big = "x".repeat(5000);
    server.request(
        1,
        "tools/call",
        json!({"name": "static_text", "arguments": {"pad": big}}),
    );
    let refused = server.recv();
    assert_eq!(error_code(&refused), -32600, "{refused}");
    server.request(2, "ping", json!({}));
    assert_eq!(server.response(2)["result"], json!({}));
}

#[cfg(target_os = "linux")]
#[test]
fn the_server_grows_its_input_pipe_so_a_large_message_crosses_in_one_piece() {
    let server = ready_catalogue();
    assert!(
        server.stdin_pipe_bytes() >= 1 << 20,
        "{} bytes",
        server.stdin_pipe_bytes()
    );
}

/// Large results are serialised into the buffer of an earlier large frame once it is
/// written: each answer carries its own text, whatever came before it, larger or smaller.
#[test]
fn large_results_in_turn_each_carry_their_own_text() {
    let mut server = ready_catalogue();
    for (id, (fill, bytes)) in [('a', 300_000), ('b', 100_000), ('c', 600_000), ('d', 10)]
        .into_iter()
        .enumerate()
    {
        let query = fill.to_string().repeat(bytes);
        let id = i64::try_from(id).unwrap() + 1;
        let response = call(&mut server, id, "search", json!({"query": query}));
        assert_eq!(
            text(&response),
            format!("{query} (limit 10)"),
            "answer {id} ({bytes} bytes of `{fill}`)"
        );
    }
}
