//! End-to-end over Streamable HTTP: real server processes (`catalogue --http 127.0.0.1:0`)
//! spoken to over loopback with a plain HTTP/1.1 client, one rule of the transport per test.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use mcp_runtime::http::HttpOptions;
use mcp_runtime::prelude::*;
use mcp_tests::http::{
    EventStream, HttpServer, Next, Request, Response, Session, SseEvent, event_stream, json_body,
    next_message,
};
use mcp_tests::workspace_binary;
use serde_json::{Value, json};

const LATEST: &str = "2025-11-25";

fn catalogue(env: &[(&str, &str)]) -> HttpServer {
    HttpServer::spawn(env!("CARGO_BIN_EXE_catalogue").as_ref(), env)
}

fn initialize_message(version: &str, capabilities: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": capabilities,
            "clientInfo": {"name": "http-e2e", "version": "1.0.0"},
        },
    })
}

fn request_message(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn call_message(id: i64, name: &str, arguments: Value) -> Value {
    request_message(
        id,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
}

/// A call that asks for progress reports under the token `progress-{id}`.
fn call_with_progress(id: i64, name: &str, arguments: Value) -> Value {
    request_message(
        id,
        "tools/call",
        json!({
            "name": name,
            "arguments": arguments,
            "_meta": {"progressToken": format!("progress-{id}")},
        }),
    )
}

/// A POST of one message with the headers every client sends.
fn post(server: &HttpServer, message: &Value) -> Request {
    server
        .request("POST", "/mcp")
        .header("Accept", "application/json, text/event-stream")
        .json(message)
}

/// Asserts a `202 Accepted` with an empty body.
fn assert_accepted(response: Response) {
    assert_eq!(response.status, 202, "{response:?}");
    assert!(response.bytes().is_empty(), "a 202 carries no body");
}

/// Asserts an HTTP error status whose body is a JSON-RPC error.
fn assert_refused(response: Response, status: u16) -> Value {
    assert_eq!(response.status, status, "{response:?}");
    let body = response.json();
    assert!(body["error"]["message"].is_string(), "{body}");
    body
}

fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content: {response}"))
}

/// The JSON-RPC messages among events: events with data that is not empty.
fn messages(events: &[SseEvent]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e.data.as_deref().is_some_and(|d| !d.is_empty()))
        .map(SseEvent::json)
        .collect()
}

/// The sequence number of an event id `stream:seq`.
fn sequence(event: &SseEvent) -> u64 {
    let id = event
        .id
        .as_deref()
        .unwrap_or_else(|| panic!("no id: {event:?}"));
    id.rsplit_once(':')
        .and_then(|(_, seq)| seq.parse().ok())
        .unwrap_or_else(|| panic!("not a `stream:seq` event id: {id}"))
}

fn progress_values(messages: &[Value]) -> Vec<f64> {
    messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"]["progress"].as_f64().expect("a progress value"))
        .collect()
}

// ---------------------------------------------------------------------------------------
// Sessions

#[test]
fn initialize_returns_a_new_session_id_of_32_hex_digits_each_time() {
    let server = catalogue(&[]);
    let first = Session::open(&server, LATEST);
    let second = Session::open(&server, LATEST);
    for id in [&first.id, &second.id] {
        assert_eq!(id.len(), 32, "{id}");
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
    }
    assert_ne!(first.id, second.id);
}

#[test]
fn a_request_without_a_session_id_is_400() {
    let server = catalogue(&[]);
    let _session = Session::open(&server, LATEST);
    let response = post(&server, &request_message(1, "ping", json!({}))).send();
    assert_refused(response, 400);
}

#[test]
fn an_unknown_session_id_is_404() {
    let server = catalogue(&[]);
    let response = post(&server, &request_message(1, "ping", json!({})))
        .header("Mcp-Session-Id", "0123456789abcdef0123456789abcdef")
        .send();
    assert_refused(response, 404);
}

#[test]
fn delete_ends_the_session_and_its_id_is_then_404() {
    let server = catalogue(&[]);
    let session = Session::open(&server, LATEST);
    assert_eq!(session.request(1, "ping", json!({}))["result"], json!({}));
    let deleted = session.headers(server.request("DELETE", "/mcp")).send();
    assert_eq!(deleted.status, 200, "{deleted:?}");
    let response = session.post(&request_message(2, "ping", json!({}))).send();
    assert_refused(response, 404);
}

#[test]
fn delete_of_an_unknown_session_is_404() {
    let server = catalogue(&[]);
    let response = server
        .request("DELETE", "/mcp")
        .header("Mcp-Session-Id", "0123456789abcdef0123456789abcdef")
        .send();
    assert_refused(response, 404);
}

#[test]
fn an_idle_session_expires_and_its_id_is_then_404() {
    let server = catalogue(&[("SESSION_IDLE_MS", "200")]);
    let session = Session::open(&server, LATEST);
    // Every request refreshes the session, so each check comes after a long idle pause.
    let deadline = std::time::Instant::now() + mcp_tests::TIMEOUT;
    loop {
        std::thread::sleep(Duration::from_millis(600));
        let response = session.post(&request_message(1, "ping", json!({}))).send();
        if response.status == 404 {
            assert_refused(response, 404);
            return;
        }
        assert_eq!(response.status, 200, "{response:?}");
        assert!(
            std::time::Instant::now() < deadline,
            "the idle session never expired"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Messages and their answers

#[test]
fn notifications_and_client_responses_are_accepted_with_202_and_no_body() {
    let server = catalogue(&[]);
    let session = Session::open(&server, LATEST);
    assert_accepted(
        session
            .post(&json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}))
            .send(),
    );
    assert_accepted(
        session
            .post(&json!({"jsonrpc": "2.0", "id": "no-such-request", "result": {}}))
            .send(),
    );
}

#[test]
fn a_simple_tool_call_is_answered_with_json() {
    let server = catalogue(&[]);
    let session = Session::open(&server, LATEST);
    let response = session.call(1, "fast", json!({}));
    assert_eq!(response["id"], 1);
    assert_eq!(text(&response), "fast");
}

#[test]
fn a_call_that_reports_progress_streams_the_notifications_in_order_before_its_response() {
    let server = catalogue(&[]);
    let session = Session::open(&server, LATEST);
    let mut stream = event_stream(
        session
            .post(&call_with_progress(7, "progress", json!({})))
            .send(),
    );
    let events = stream.until_end();
    let messages = messages(&events);
    assert_eq!(progress_values(&messages), [1.0, 2.0, 3.0], "{messages:?}");
    assert!(
        messages[..3]
            .iter()
            .all(|m| m["params"]["progressToken"] == "progress-7")
    );
    assert_eq!(messages.len(), 4, "three reports, then the response");
    assert_eq!(messages[3]["id"], 7);
    assert_eq!(text(&messages[3]), "done");
    let sequence: Vec<u64> = events.iter().map(sequence).collect();
    assert!(
        sequence.windows(2).all(|w| w[0] < w[1]),
        "event ids increase: {events:?}"
    );
}

#[test]
fn a_call_that_logs_streams_its_log_messages_before_its_response() {
    let server = catalogue(&[]);
    let session = Session::open(&server, LATEST);
    let events = event_stream(session.post(&call_message(3, "log", json!({}))).send()).until_end();
    let messages = messages(&events);
    let levels: Vec<&Value> = messages
        .iter()
        .take_while(|m| m["method"] == "notifications/message")
        .map(|m| &m["params"]["level"])
        .collect();
    // `info` until the client sets a level: the debug message is not sent.
    assert_eq!(levels, [&json!("info"), &json!("error")], "{messages:?}");
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert_eq!(text(&messages[2]), "logged");
    assert!(events.iter().all(|e| e.id.is_some()), "{events:?}");
}

#[test]
fn a_2025_11_25_stream_starts_with_a_priming_event() {
    let server = catalogue(&[("HTTP_SSE_RETRY_MS", "1500")]);
    let session = Session::open(&server, LATEST);
    let mut stream = event_stream(
        session
            .post(&call_with_progress(1, "progress", json!({})))
            .send(),
    );
    let priming = stream.expect_event();
    assert!(priming.id.is_some(), "{priming:?}");
    assert_eq!(priming.data.as_deref(), Some(""), "{priming:?}");
    assert_eq!(priming.retry, Some(1500), "{priming:?}");
    let first = stream.expect_event();
    assert_eq!(first.json()["method"], "notifications/progress");
    assert!(sequence(&first) > sequence(&priming));
}

#[test]
fn a_2025_06_18_stream_has_no_priming_event() {
    let server = catalogue(&[]);
    let session = Session::open(&server, "2025-06-18");
    let mut stream = event_stream(
        session
            .post(&call_with_progress(1, "progress", json!({})))
            .send(),
    );
    let first = stream.expect_event();
    assert_eq!(
        first.json()["method"],
        "notifications/progress",
        "{first:?}"
    );
}

#[test]
fn an_accept_header_without_event_stream_is_406() {
    let server = catalogue(&[]);
    let response = post(&server, &initialize_message(LATEST, json!({})))
        .header("Accept", "application/json")
        .send();
    assert_refused(response, 406);
}

#[test]
fn an_accept_header_listing_both_types_in_any_order_is_accepted() {
    let server = catalogue(&[]);
    let response = post(&server, &initialize_message(LATEST, json!({})))
        .header("Accept", "text/event-stream, application/json")
        .send();
    assert_eq!(json_body(response)["result"]["protocolVersion"], LATEST);
}

#[test]
fn a_body_that_is_not_declared_json_is_415() {
    let server = catalogue(&[]);
    let response = post(&server, &initialize_message(LATEST, json!({})))
        .header("Content-Type", "text/plain")
        .send();
    assert_refused(response, 415);
}

#[test]
fn a_body_over_the_limit_is_413() {
    let server = catalogue(&[("HTTP_MAX_BODY_BYTES", "2048")]);
    let session = Session::open(&server, LATEST);
    let small = session.call(1, "search", json!({"query": "x".repeat(1000)}));
    assert!(text(&small).starts_with("xxx"));
    let response = session
        .post(&call_message(
            2,
            "search",
            json!({"query": "x".repeat(4000)}),
        ))
        .send();
    assert_eq!(response.status, 413, "{response:?}");
}

#[test]
fn an_unknown_protocol_version_header_is_400() {
    let server = catalogue(&[]);
    let session = Session::open(&server, LATEST);
    let response = session
        .post(&request_message(1, "ping", json!({})))
        .header("MCP-Protocol-Version", "1999-01-01")
        .send();
    let body = assert_refused(response, 400);
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("2025-11-25")),
        "the error names the supported revisions: {body}"
    );
}

#[test]
fn every_supported_protocol_version_header_is_accepted() {
    let server = catalogue(&[]);
    let session = Session::open(&server, LATEST);
    for (id, version) in (1..).zip(["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]) {
        let response = session
            .post(&request_message(id, "ping", json!({})))
            .header("MCP-Protocol-Version", version)
            .send();
        assert_eq!(json_body(response)["id"], id, "{version}");
    }
}

#[test]
fn a_request_without_a_protocol_version_header_is_accepted() {
    let server = catalogue(&[]);
    let session = Session::open(&server, LATEST);
    let response = session
        .post(&request_message(1, "ping", json!({})))
        .without_header("MCP-Protocol-Version")
        .send();
    assert_eq!(json_body(response)["result"], json!({}));
}

// ---------------------------------------------------------------------------------------
// Host and Origin

#[test]
fn an_endpoint_on_the_legacy_streams_path_is_refused_before_serving() {
    let (status, stderr) = mcp_tests::refusal_of(
        std::process::Command::new(env!("CARGO_BIN_EXE_catalogue"))
            .args(["--http", "127.0.0.1:0"])
            .env("HTTP_PATH", "/sse"),
    );
    // An error said in words, not a panic of the router (exit status 101).
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("two routes on `/sse`"), "{stderr}");
    assert!(!stderr.contains("serving"), "{stderr}");
}

#[test]
fn a_host_not_allowed_is_403_and_opens_no_session() {
    // With room for one session, a session opened by the refused request would evict this one.
    let server = catalogue(&[("HTTP_MAX_SESSIONS", "1")]);
    let session = Session::open(&server, LATEST);
    let response = post(&server, &initialize_message(LATEST, json!({})))
        .header("Host", "evil.example.com")
        .send();
    assert!(response.header("mcp-session-id").is_none(), "{response:?}");
    assert_refused(response, 403);
    assert_eq!(session.request(1, "ping", json!({}))["result"], json!({}));
}

#[test]
fn a_host_named_in_the_allowed_hosts_is_served_with_any_port() {
    let server = catalogue(&[("HTTP_ALLOWED_HOSTS", "mcp.example.com")]);
    let response = post(&server, &initialize_message(LATEST, json!({})))
        .header("Host", "mcp.example.com:8443")
        .send();
    assert_eq!(json_body(response)["result"]["protocolVersion"], LATEST);
    let loopback = post(&server, &initialize_message(LATEST, json!({}))).send();
    assert_refused(loopback, 403);
}

#[test]
fn an_origin_not_allowed_is_403() {
    let server = catalogue(&[]);
    for origin in [
        "http://evil.example.com",
        "null",
        "http://localhost.evil.example.com",
    ] {
        let response = post(&server, &initialize_message(LATEST, json!({})))
            .header("Origin", origin)
            .send();
        assert!(response.header("mcp-session-id").is_none(), "{origin}");
        assert_refused(response, 403);
    }
}

#[test]
fn a_loopback_origin_is_allowed() {
    let server = catalogue(&[]);
    let port = server.addr().port();
    for origin in [
        format!("http://localhost:{port}"),
        format!("http://127.0.0.1:{port}"),
        format!("https://[::1]:{port}"),
    ] {
        let response = post(&server, &initialize_message(LATEST, json!({})))
            .header("Origin", &origin)
            .send();
        assert_eq!(
            json_body(response)["result"]["protocolVersion"],
            LATEST,
            "{origin}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// The session's GET stream

/// Opens the session's GET stream and waits for its priming event, so the stream is
/// following the session's messages before the test makes any.
fn open_standalone_stream(session: &Session<'_>) -> EventStream {
    let mut stream = event_stream(session.get().send());
    let priming = stream.expect_event();
    assert_eq!(priming.data.as_deref(), Some(""), "{priming:?}");
    stream
}

#[test]
fn the_get_stream_carries_resource_updates_after_a_subscription() {
    let server = catalogue(&[]);
    let session = Session::open(&server, LATEST);
    let mut stream = open_standalone_stream(&session);
    let subscribed = session.request(1, "resources/subscribe", json!({"uri": "test://watched"}));
    assert_eq!(subscribed["result"], json!({}), "{subscribed}");
    assert_eq!(
        text(&session.call(2, "touch_watched", json!({}))),
        "touched"
    );
    let update = next_message(&mut stream);
    assert_eq!(
        update["method"], "notifications/resources/updated",
        "{update}"
    );
    assert_eq!(update["params"]["uri"], "test://watched");
}

#[test]
fn the_get_stream_carries_tools_list_changed() {
    let server = catalogue(&[]);
    let session = Session::open(&server, LATEST);
    let mut stream = open_standalone_stream(&session);
    let toggled = session.call(1, "toggle_tool", json!({"name": "fast", "enabled": false}));
    assert_eq!(text(&toggled), "changed: true");
    let changed = next_message(&mut stream);
    assert_eq!(
        changed["method"], "notifications/tools/list_changed",
        "{changed}"
    );
}

#[test]
fn a_second_concurrent_get_stream_is_409() {
    let server = catalogue(&[]);
    let session = Session::open(&server, LATEST);
    let _stream = open_standalone_stream(&session);
    assert_refused(session.get().send(), 409);
}

#[test]
fn a_get_stream_can_be_opened_again_after_the_client_drops_it() {
    let server = catalogue(&[]);
    let session = Session::open(&server, LATEST);
    open_standalone_stream(&session).disconnect();
    // The server learns of the disconnection asynchronously; a client retries on 409.
    let deadline = std::time::Instant::now() + mcp_tests::TIMEOUT;
    let mut stream = loop {
        let response = session.get().send();
        if response.status != 409 {
            break event_stream(response);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the dropped stream still counts as open"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(stream.expect_event().data.as_deref(), Some(""));
    session.call(1, "toggle_tool", json!({"name": "fast", "enabled": false}));
    assert_eq!(
        next_message(&mut stream)["method"],
        "notifications/tools/list_changed"
    );
}

// ---------------------------------------------------------------------------------------
// Resumption

#[test]
fn a_dropped_call_stream_resumes_with_last_event_id_and_every_later_event_arrives_once() {
    let server = catalogue(&[]);
    let session = Session::open(&server, LATEST);
    let mut stream = event_stream(
        session
            .post(&call_with_progress(
                5,
                "slow_progress",
                json!({"steps": 4, "pause_ms": 200}),
            ))
            .send(),
    );
    let priming = stream.expect_event();
    assert_eq!(priming.data.as_deref(), Some(""));
    let first = stream.expect_event();
    assert_eq!(progress_values(&[first.json()]), [1.0]);
    stream.disconnect();

    let last_seen = first.id.clone().expect("an event id");
    let resumed =
        event_stream(session.get().header("Last-Event-ID", &last_seen).send()).until_end();
    assert!(
        resumed.iter().all(|e| sequence(e) >= sequence(&first)),
        "nothing before the Last-Event-ID comes again: {resumed:?}"
    );
    let messages = messages(&resumed);
    assert_eq!(progress_values(&messages), [2.0, 3.0, 4.0], "{messages:?}");
    assert_eq!(
        messages.len(),
        4,
        "three reports and the response: {messages:?}"
    );
    assert_eq!(messages[3]["id"], 5);
    assert_eq!(text(&messages[3]), "finished");
}

#[test]
fn a_stream_the_handler_closes_resumes_with_the_rest_of_the_call() {
    let server = catalogue(&[]);
    let session = Session::open(&server, LATEST);
    let mut stream = event_stream(
        session
            .post(&call_with_progress(9, "close_stream_midway", json!({})))
            .send(),
    );
    let before = stream.until_end();
    assert!(
        before.iter().any(|e| e.retry == Some(50)),
        "the handler's retry is announced: {before:?}"
    );
    let last_seen = before
        .iter()
        .rev()
        .find_map(|e| e.id.clone())
        .expect("an event id before the stream closed");
    let after = event_stream(session.get().header("Last-Event-ID", &last_seen).send()).until_end();
    let mut messages = messages(&before);
    assert!(
        messages.iter().all(|m| m.get("id").is_none()),
        "no response before the stream closed: {messages:?}"
    );
    messages.extend(self::messages(&after));
    assert_eq!(progress_values(&messages), [1.0, 2.0, 3.0], "{messages:?}");
    assert_eq!(messages.len(), 4, "{messages:?}");
    assert_eq!(text(&messages[3]), "answered after the stream was closed");
}

#[test]
fn resuming_a_call_stream_is_not_refused_while_the_get_stream_is_open() {
    let server = catalogue(&[]);
    let session = Session::open(&server, LATEST);
    let _standalone = open_standalone_stream(&session);
    let before = event_stream(
        session
            .post(&call_with_progress(2, "close_stream_midway", json!({})))
            .send(),
    )
    .until_end();
    let last_seen = before
        .iter()
        .rev()
        .find_map(|e| e.id.clone())
        .expect("an event id");
    let after = event_stream(session.get().header("Last-Event-ID", &last_seen).send()).until_end();
    let response = messages(&after).pop().expect("the rest of the call");
    assert_eq!(response["id"], 2, "{response}");
}

#[test]
fn a_stream_delivered_to_its_end_is_not_kept_and_resuming_it_is_400() {
    // Kept, every finished call would cost memory for the stream's retention: a million
    // calls, gigabytes. A stream the client read to its end has no one to resume it.
    let server = catalogue(&[]);
    let session = Session::open(&server, LATEST);
    let events = event_stream(
        session
            .post(&call_with_progress(1, "progress", json!({})))
            .send(),
    )
    .until_end();
    let id = events
        .iter()
        .rev()
        .find_map(|e| e.id.clone())
        .expect("an event id");
    // The store drops the stream a moment after the end is taken.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let response = session.get().header("Last-Event-ID", &id).send();
        if response.status == 400 {
            let body = response.json();
            assert!(
                body["error"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("no longer kept")),
                "{body}"
            );
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{response:?}");
        drop(response);
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_last_event_id_of_another_session_is_400() {
    let server = catalogue(&[]);
    let owner = Session::open(&server, LATEST);
    let events = event_stream(
        owner
            .post(&call_with_progress(1, "progress", json!({})))
            .send(),
    )
    .until_end();
    let id = events
        .last()
        .and_then(|e| e.id.clone())
        .expect("an event id");
    let other = Session::open(&server, LATEST);
    assert_refused(other.get().header("Last-Event-ID", &id).send(), 400);
}

// ---------------------------------------------------------------------------------------
// Requests from the server

#[test]
fn a_sampling_request_travels_on_the_call_stream_and_the_answer_is_posted_back() {
    let server = catalogue(&[]);
    let session = Session::open_with(&server, LATEST, json!({"sampling": {}}), None);
    let mut stream = event_stream(
        session
            .post(&call_message(
                4,
                "ask_model",
                json!({"question": "Capital of France?"}),
            ))
            .send(),
    );
    let request = next_message(&mut stream);
    assert_eq!(request["method"], "sampling/createMessage", "{request}");
    let answer = json!({
        "jsonrpc": "2.0",
        "id": request["id"],
        "result": {
            "role": "assistant",
            "content": {"type": "text", "text": "Paris"},
            "model": "test-model",
            "stopReason": "endTurn",
        },
    });
    assert_accepted(session.post(&answer).send());
    let response = next_message(&mut stream);
    assert_eq!(response["id"], 4);
    assert_eq!(text(&response), "Paris (by test-model)");
    assert!(
        stream.next_event().is_none(),
        "the stream ends after the response"
    );
}

// ---------------------------------------------------------------------------------------
// Stateless mode

#[test]
fn a_stateless_server_issues_no_session_and_answers_every_request_with_json() {
    let server = catalogue(&[("HTTP_STATELESS", "1")]);
    let response = post(&server, &initialize_message(LATEST, json!({}))).send();
    assert!(response.header("mcp-session-id").is_none(), "{response:?}");
    assert_eq!(json_body(response)["result"]["protocolVersion"], LATEST);

    let response = post(&server, &call_with_progress(2, "progress", json!({})))
        .header("MCP-Protocol-Version", LATEST)
        .send();
    assert!(response.header("mcp-session-id").is_none(), "{response:?}");
    let response = json_body(response);
    assert_eq!(response["id"], 2);
    assert_eq!(text(&response), "done");
}

#[test]
fn a_stateless_server_refuses_get_and_delete_with_405() {
    let server = catalogue(&[("HTTP_STATELESS", "1")]);
    let get = server
        .request("GET", "/mcp")
        .header("Accept", "text/event-stream")
        .send();
    assert_eq!(get.header("allow"), Some("POST"));
    assert_refused(get, 405);
    let delete = server
        .request("DELETE", "/mcp")
        .header("Mcp-Session-Id", "0123456789abcdef0123456789abcdef")
        .send();
    assert_refused(delete, 405);
}

// ---------------------------------------------------------------------------------------
// Limits

#[test]
fn requests_without_a_session_beyond_the_endpoint_limit_are_503_with_retry_after() {
    let server = catalogue(&[("HTTP_MAX_IN_FLIGHT_SESSIONLESS", "1")]);
    let modern = |id: i64, name: &str, arguments: Value| {
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "http-e2e", "version": "1.0.0"},
            "progressToken": format!("p{id}"),
        });
        server
            .request("POST", "/mcp")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", name)
            .json(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": name, "arguments": arguments, "_meta": meta}}))
    };
    let mut slow =
        event_stream(modern(1, "slow_progress", json!({"steps": 2, "pause_ms": 600_000})).send());
    assert_eq!(progress_values(&[next_message(&mut slow)]), [1.0]);
    let busy = modern(2, "fast", json!({})).send();
    assert_eq!(busy.header("retry-after"), Some("1"), "{busy:?}");
    assert_refused(busy, 503);
    // The client gives up on the slow call: its slot is free again.
    slow.disconnect();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let response = modern(3, "fast", json!({})).send();
        if response.status == 200 {
            break;
        }
        assert_eq!(response.status, 503, "{response:?}");
        assert!(
            std::time::Instant::now() < deadline,
            "the slot was never freed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_request_beyond_the_per_session_in_flight_limit_is_429() {
    let server = catalogue(&[("HTTP_MAX_IN_FLIGHT", "1")]);
    let session = Session::open(&server, LATEST);
    let mut slow = event_stream(
        session
            .post(&call_with_progress(
                1,
                "slow_progress",
                json!({"steps": 2, "pause_ms": 600_000}),
            ))
            .send(),
    );
    assert_eq!(progress_values(&[next_message(&mut slow)]), [1.0]);
    assert_refused(
        session.post(&request_message(2, "ping", json!({}))).send(),
        429,
    );

    // Notifications are not requests: the cancellation gets through and frees the slot.
    assert_accepted(
        session
            .post(&json!({
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 1},
            }))
            .send(),
    );
    assert!(
        messages(&slow.until_end()).is_empty(),
        "a cancelled request gets no response"
    );
    assert_eq!(session.request(3, "ping", json!({}))["result"], json!({}));
}

#[test]
fn a_request_cancelled_before_it_sent_anything_is_answered_with_a_stream_that_ends_empty() {
    let server = catalogue(&[]);
    let session = Session::open(&server, LATEST);
    // The call sends nothing until it is cancelled: no progress token, no logs.
    let call = session.post(&call_message(1, "sleep", json!({"ms": 600_000})));
    let (answered, answer) = std::sync::mpsc::channel();
    let caller = std::thread::spawn(move || {
        let response = call.send();
        let status = response.status;
        let media = response.media_type().map(str::to_owned);
        let _ = answered.send((status, media, response.bytes()));
    });
    // A cancellation that arrives before the call is in flight cancels nothing: it is sent
    // again until the call is over.
    let deadline = std::time::Instant::now() + mcp_tests::TIMEOUT;
    let (status, media, body) = loop {
        assert_accepted(
            session
                .post(
                    &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                               "params": {"requestId": 1}}),
                )
                .send(),
        );
        match answer.recv_timeout(Duration::from_millis(100)) {
            Ok(answer) => break answer,
            Err(_) => assert!(
                std::time::Instant::now() < deadline,
                "the call was never cancelled"
            ),
        }
    };
    caller.join().expect("the caller thread");
    // A request's POST is answered with JSON or a stream, never 202; a cancelled request
    // gets no response, so its stream carries none.
    assert_eq!(status, 200);
    assert_eq!(media.as_deref(), Some("text/event-stream"));
    assert!(body.is_empty(), "{}", String::from_utf8_lossy(&body));
    assert_eq!(session.request(2, "ping", json!({}))["result"], json!({}));
}

#[test]
fn the_answer_to_a_server_request_is_accepted_at_the_in_flight_limit() {
    let server = catalogue(&[("HTTP_MAX_IN_FLIGHT", "1")]);
    let session = Session::open_with(&server, LATEST, json!({"sampling": {}}), None);
    let mut stream = event_stream(
        session
            .post(&call_message(
                1,
                "ask_model",
                json!({"question": "Capital of Peru?"}),
            ))
            .send(),
    );
    let request = next_message(&mut stream);
    assert_eq!(request["method"], "sampling/createMessage", "{request}");
    let answer = json!({
        "jsonrpc": "2.0",
        "id": request["id"],
        "result": {
            "role": "assistant",
            "content": {"type": "text", "text": "Lima"},
            "model": "test-model",
        },
    });
    assert_accepted(session.post(&answer).send());
    assert_eq!(text(&next_message(&mut stream)), "Lima (by test-model)");
}

#[test]
fn a_request_sent_right_after_a_response_is_not_refused_at_the_in_flight_limit() {
    let server = catalogue(&[("HTTP_MAX_IN_FLIGHT", "1")]);
    let session = Session::open(&server, LATEST);
    for id in 1..=50 {
        let response = session.post(&call_message(id, "fast", json!({}))).send();
        assert_eq!(text(&json_body(response)), "fast", "call {id}");
    }
}

// ---------------------------------------------------------------------------------------
// Authorisation

const TOKEN: &str = "the-right-token";

fn protected(required_scopes: &str) -> HttpServer {
    catalogue(&[
        ("HTTP_AUTH_TOKEN", TOKEN),
        ("HTTP_REQUIRED_SCOPES", required_scopes),
        ("HTTP_AUTHORIZATION_SERVERS", "https://auth.example.com"),
    ])
}

#[test]
fn a_request_without_a_token_is_401_with_a_challenge_naming_the_metadata() {
    let server = protected("mcp");
    let response = post(&server, &initialize_message(LATEST, json!({}))).send();
    let expected = format!(
        "Bearer resource_metadata=\"{}\"",
        server.url("/.well-known/oauth-protected-resource/mcp")
    );
    assert_eq!(response.header("www-authenticate"), Some(expected.as_str()));
    assert!(response.header("mcp-session-id").is_none());
    assert_refused(response, 401);
}

#[test]
fn a_wrong_token_is_401_invalid_token() {
    let server = protected("mcp");
    let response = post(&server, &initialize_message(LATEST, json!({})))
        .header("Authorization", "Bearer not-the-token")
        .send();
    let challenge = response.header("www-authenticate").unwrap_or_default();
    assert!(
        challenge.starts_with("Bearer ") && challenge.contains("error=\"invalid_token\""),
        "{challenge}"
    );
    assert!(challenge.contains("resource_metadata=\""), "{challenge}");
    assert_refused(response, 401);
}

#[test]
fn a_token_without_the_required_scope_is_403_insufficient_scope() {
    let server = protected("admin");
    let response = post(&server, &initialize_message(LATEST, json!({})))
        .header("Authorization", &format!("Bearer {TOKEN}"))
        .send();
    let challenge = response.header("www-authenticate").unwrap_or_default();
    assert!(
        challenge.contains("error=\"insufficient_scope\"") && challenge.contains("scope=\"admin\""),
        "{challenge}"
    );
    assert_refused(response, 403);
}

#[test]
fn the_protected_resource_metadata_is_served_without_a_token() {
    let server = protected("mcp");
    let metadata = json_body(
        server
            .request("GET", "/.well-known/oauth-protected-resource")
            .send(),
    );
    assert_eq!(metadata["resource"], server.url("/mcp"));
    assert_eq!(
        metadata["authorization_servers"],
        json!(["https://auth.example.com"])
    );
    assert_eq!(metadata["scopes_supported"], json!(["mcp"]));
}

#[test]
fn a_good_token_is_served_and_the_handler_sees_the_caller() {
    let server = protected("mcp");
    let session = Session::open_with(&server, LATEST, json!({}), Some(TOKEN));
    assert_eq!(text(&session.call(1, "whoami", json!({}))), "tester [mcp]");
}

#[test]
fn without_auth_configured_the_handler_sees_no_caller() {
    let server = catalogue(&[]);
    let session = Session::open(&server, LATEST);
    assert_eq!(text(&session.call(1, "whoami", json!({}))), "anonymous");
}

// ---------------------------------------------------------------------------------------
// In an application's own router

/// Greets someone.
#[tool]
fn greet(
    /// Who.
    name: String,
) -> String {
    format!("Hello, {name}!")
}

#[mcp_runtime::test]
async fn the_endpoint_mounts_into_an_application_router_beside_its_own_routes() {
    let server = mcp_runtime::server!()
        .build()
        .expect("a consistent catalogue");
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .merge(server.http_router(HttpOptions::default().path("/api/mcp")));
    let listener = mcp_runtime::tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind a loopback port");
    let addr = listener.local_addr().expect("the bound address");
    mcp_runtime::tokio::spawn(async move { axum::serve(listener, app).await });

    mcp_runtime::tokio::task::spawn_blocking(move || {
        let health = Request::new(addr, "GET", "/health").send();
        assert_eq!(health.status, 200);
        assert_eq!(health.text(), "ok");

        let init = Request::new(addr, "POST", "/api/mcp")
            .header("Accept", "application/json, text/event-stream")
            .json(&initialize_message(LATEST, json!({})))
            .send();
        let id = init
            .header("mcp-session-id")
            .expect("a session id")
            .to_owned();
        assert_eq!(json_body(init)["result"]["serverInfo"]["name"], "mcp-tests");
        let call = Request::new(addr, "POST", "/api/mcp")
            .header("Accept", "application/json, text/event-stream")
            .header("Mcp-Session-Id", &id)
            .json(&call_message(1, "greet", json!({"name": "Ada"})))
            .send();
        assert_eq!(text(&json_body(call)), "Hello, Ada!");

        let elsewhere = Request::new(addr, "POST", "/mcp")
            .header("Accept", "application/json, text/event-stream")
            .json(&initialize_message(LATEST, json!({})))
            .send();
        assert_eq!(elsewhere.status, 404, "only the path given is the endpoint");

        // Mounted, the endpoint's POST is routed, and the guard stands in front of it there
        // too (a standalone server hands it over without the router).
        let foreign = Request::new(addr, "POST", "/api/mcp")
            .header("Host", "attacker.example")
            .header("Accept", "application/json, text/event-stream")
            .json(&initialize_message(LATEST, json!({})))
            .send();
        assert_eq!(
            foreign.status, 403,
            "a foreign Host is refused: {foreign:?}"
        );
    })
    .await
    .expect("the HTTP checks pass");
}

// ---------------------------------------------------------------------------------------
// Shutdown, and an example

#[test]
fn sigterm_lets_the_call_in_flight_finish_and_the_process_exit_0() {
    let mut server = catalogue(&[]);
    let session = Session::open(&server, LATEST);
    let mut stream = event_stream(
        session
            .post(&call_with_progress(
                1,
                "slow_progress",
                json!({"steps": 3, "pause_ms": 300}),
            ))
            .send(),
    );
    assert_eq!(progress_values(&[next_message(&mut stream)]), [1.0]);
    server.terminate();
    let rest = messages(&stream.until_end());
    assert_eq!(progress_values(&rest), [2.0, 3.0], "{rest:?}");
    assert_eq!(rest.len(), 3, "{rest:?}");
    assert_eq!(text(&rest[2]), "finished");
    let status = server.wait();
    assert!(status.success(), "{status}");
}

#[test]
fn sigterm_lets_a_resumed_call_stream_finish_too() {
    let mut server = catalogue(&[]);
    let session = Session::open(&server, LATEST);
    let mut stream = event_stream(
        session
            .post(&call_with_progress(
                1,
                "slow_progress",
                json!({"steps": 3, "pause_ms": 300}),
            ))
            .send(),
    );
    let priming = stream.expect_event();
    stream.disconnect();
    let mut resumed = event_stream(
        session
            .get()
            .header("Last-Event-ID", priming.id.as_deref().expect("an event id"))
            .send(),
    );
    assert_eq!(progress_values(&[next_message(&mut resumed)]), [1.0]);
    server.terminate();
    let rest = messages(&resumed.until_end());
    assert_eq!(progress_values(&rest), [2.0, 3.0], "{rest:?}");
    assert_eq!(text(&rest[2]), "finished");
    let status = server.wait();
    assert!(status.success(), "{status}");
}

#[test]
fn sigterm_ends_an_idle_get_stream_and_the_process_exits_0() {
    let mut server = catalogue(&[]);
    let session = Session::open(&server, LATEST);
    let mut stream = open_standalone_stream(&session);
    server.terminate();
    loop {
        match stream.next_within(mcp_tests::TIMEOUT) {
            Next::End => break,
            Next::Event(event) => assert!(event.data.as_deref().is_none_or(str::is_empty)),
            Next::TimedOut => panic!("the GET stream stayed open after SIGTERM"),
        }
    }
    let status = server.wait();
    assert!(status.success(), "{status}");
}

#[test]
fn the_quickstart_example_serves_http_with_its_one_flag() {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    let server = HttpServer::spawn(PATH.get_or_init(|| workspace_binary("quickstart")), &[]);
    assert_eq!(server.path(), "/mcp");
    let session = Session::open(&server, LATEST);
    let response = session.call(1, "add", json!({"a": 2, "b": 40}));
    assert_eq!(text(&response), "42");
}

/// JSON answers to the endpoint's POSTs and its refusals say their length, as keep-alive
/// clients and proxies expect, rather than coming in chunks.
#[test]
fn json_answers_and_refusals_carry_a_content_length() {
    let server = catalogue(&[]);
    let answered = post(&server, &initialize_message(LATEST, json!({}))).send();
    let refused = server
        .request("POST", "/mcp")
        .header("Accept", "text/html")
        .json(&initialize_message(LATEST, json!({})))
        .send();
    for (response, status) in [(answered, 200), (refused, 406)] {
        assert_eq!(response.status, status, "{response:?}");
        assert_eq!(response.header("transfer-encoding"), None, "{response:?}");
        let length = response
            .header("content-length")
            .unwrap_or_else(|| panic!("no Content-Length: {response:?}"))
            .parse::<usize>()
            .unwrap();
        assert_eq!(response.bytes().len(), length);
    }
}
