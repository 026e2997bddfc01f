//! The server under faults, limits and hostile load, and its policy, audit and message log:
//! each test starts a real server process, provokes one thing, and checks that the server
//! answered as it should and still serves.

use std::io::{Read as _, Write as _};
use std::time::{Duration, Instant};

use mcp_tests::http::HttpServer;
use mcp_tests::peer::{MODERN, Peer, Transport};
use mcp_tests::{Scratch, StdioServer};
use serde_json::{Value, json};

fn catalogue(env: &[(&str, &str)]) -> StdioServer {
    let mut server = StdioServer::spawn_with_env(env!("CARGO_BIN_EXE_catalogue").as_ref(), env);
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

fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {response}"))
}

fn still_serves(server: &mut StdioServer, id: i64) {
    let response = call(server, id, "fast", json!({}));
    assert_eq!(text(&response), "fast", "the server goes on serving");
}

#[test]
fn a_message_nested_too_deeply_is_refused_and_the_next_one_is_served() {
    let mut server = catalogue(&[("MAX_NESTING_DEPTH", "16")]);
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"count_nodes","arguments":{{"tree":{}}}}}}}"#,
        "[".repeat(20) + &"]".repeat(20)
    );
    server.send_raw(format!("{deep}\n").as_bytes());
    let refused = server.recv();
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(refused["id"], 1, "the id is read when it can be: {refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("16"));
    // Even far past what any parser's recursion would survive: read without recursion, it
    // is an invalid request when it is JSON, and a parse error when it is not.
    let closed = "[".repeat(200_000) + &"]".repeat(200_000);
    server.send_raw(format!("{closed}\n").as_bytes());
    assert_eq!(server.recv()["error"]["code"], -32600);
    server.send_raw(format!("{}\n", "[".repeat(200_000)).as_bytes());
    assert_eq!(server.recv()["error"]["code"], -32700);
    still_serves(&mut server, 2);
}

#[test]
fn on_stdio_requests_past_the_in_flight_limit_are_refused_until_slots_free() {
    let mut server = catalogue(&[("MAX_IN_FLIGHT", "2")]);
    server.request(10, "tools/call", json!({"name": "hold"}));
    server.request(11, "tools/call", json!({"name": "hold"}));
    let busy = call(&mut server, 12, "fast", json!({}));
    assert_eq!(busy["error"]["code"], -32000, "{busy}");
    assert!(
        busy["error"]["message"]
            .as_str()
            .unwrap()
            .contains("limit is 2")
    );
    // A cancellation still gets through, and frees a slot.
    server.notify("notifications/cancelled", json!({"requestId": 10}));
    let deadline = Instant::now() + mcp_tests::TIMEOUT;
    loop {
        let response = call(&mut server, 13, "fast", json!({}));
        if response.get("result").is_some() {
            break;
        }
        assert!(Instant::now() < deadline, "no slot freed: {response}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_cancelled_call_is_dropped_even_when_its_tool_never_looks_at_its_context() {
    let mut server = catalogue(&[]);
    server.request(1, "tools/call", json!({"name": "deaf"}));
    // Answered after the call began to wait: a cancellation read with the call itself
    // would be seen before the call is polled a second time.
    assert_eq!(
        text(&call(&mut server, 2, "holds_cancelled", json!({}))),
        "0"
    );
    server.notify("notifications/cancelled", json!({"requestId": 1}));
    // The call's future is dropped at the cancellation, not an hour later.
    let deadline = Instant::now() + mcp_tests::TIMEOUT;
    let mut id = 3;
    while text(&call(&mut server, id, "holds_cancelled", json!({}))) != "1" {
        assert!(Instant::now() < deadline, "the cancelled call still runs");
        std::thread::sleep(Duration::from_millis(20));
        id += 1;
    }
    // And it is never answered.
    still_serves(&mut server, id + 1);
    server.close_stdin();
    let rest = server.remaining_messages();
    assert!(
        rest.iter().all(|m| m.get("id") != Some(&json!(1))),
        "{rest:?}"
    );
    assert!(server.wait().success());
}

#[test]
fn a_tool_past_its_time_limit_is_stopped_with_a_tool_error() {
    let mut server = catalogue(&[("TOOL_TIMEOUT_MS", "100")]);
    let response = call(&mut server, 1, "stuck", json!({}));
    assert_eq!(response["result"]["isError"], true);
    assert!(
        text(&response).contains("within 200 ms"),
        "its own limit: {response}"
    );
    assert_eq!(text(&call(&mut server, 2, "stuck_stopped", json!({}))), "1");
    // The server's limit holds for tools without one of their own.
    let response = call(&mut server, 3, "sleep", json!({"ms": 10_000}));
    assert_eq!(response["result"]["isError"], true);
    assert!(text(&response).contains("within 100 ms"), "{response}");
    still_serves(&mut server, 4);
}

#[test]
fn a_blocking_tool_past_its_time_limit_sees_its_context_cancelled() {
    let mut server = catalogue(&[]);
    let response = call(&mut server, 1, "stuck_blocking", json!({}));
    assert_eq!(response["result"]["isError"], true, "{response}");
    assert!(text(&response).contains("within 200 ms"), "{response}");
    // The thread it blocked notices and stops.
    let deadline = std::time::Instant::now() + mcp_tests::TIMEOUT;
    let mut id = 2;
    while text(&call(&mut server, id, "stuck_stopped", json!({}))) != "1" {
        assert!(
            std::time::Instant::now() < deadline,
            "the blocked thread never saw it"
        );
        std::thread::sleep(Duration::from_millis(20));
        id += 1;
    }
    still_serves(&mut server, id + 1);
}

#[test]
fn an_enormous_result_is_delivered_and_the_server_goes_on() {
    let mut server = catalogue(&[]);
    let response = call(&mut server, 1, "enormous", json!({"megabytes": 48}));
    assert_eq!(text(&response).len(), 48 << 20);
    still_serves(&mut server, 2);
}

#[cfg(target_os = "linux")]
fn peak_rss_kib(pid: u32) -> u64 {
    mcp_tests::group::memory_kib(pid, "VmHWM").unwrap_or(0)
}

#[test]
#[cfg(target_os = "linux")]
fn a_client_that_does_not_read_cannot_make_the_server_hold_its_notifications() {
    let scratch = Scratch::new("reliability");
    let audit = scratch.path("flood-audit.jsonl");
    let mut server = catalogue(&[("AUDIT_FILE", audit.to_str().unwrap())]);
    server.request(1, "logging/setLevel", json!({"level": "debug"}));
    server.response(1);
    // 256 MiB of log messages while the client reads nothing.
    server.pause_reading();
    server.request(
        2,
        "tools/call",
        json!({"name": "flood", "arguments": {"count": 32_768, "bytes": 8192}}),
    );
    // The call's audit record is written when the call is over, every message sent or
    // dropped: the server's peak memory is then that of the whole flood.
    let deadline = Instant::now() + 3 * mcp_tests::TIMEOUT;
    while !std::fs::read_to_string(&audit).is_ok_and(|records| records.contains("\"flood\"")) {
        assert!(Instant::now() < deadline, "the flood never ended");
        std::thread::sleep(Duration::from_millis(20));
    }
    let peak = peak_rss_kib(server.pid());
    assert!(
        peak < 96 * 1024,
        "the server held {peak} KiB for a client that does not read"
    );
    // Reading again: the response comes, after the notifications that were kept.
    server.resume_reading();
    let response = server.response(2);
    assert_eq!(text(&response), "sent 32768 messages");
    let kept = server.take_backlog().len();
    // The budget of 16 MiB holds some 2,000 of them.
    assert!(
        kept < 4096,
        "notifications past the budget were dropped ({kept} kept)"
    );
    still_serves(&mut server, 3);
}

#[test]
fn at_the_end_of_input_calls_in_flight_are_cancelled_after_the_grace_period() {
    let mut server = catalogue(&[("SHUTDOWN_GRACE_MS", "300")]);
    server.request(1, "tools/call", json!({"name": "hold"}));
    server.request(
        2,
        "tools/call",
        json!({"name": "sleep", "arguments": {"ms": 100}}),
    );
    std::thread::sleep(Duration::from_millis(50));
    let closed = Instant::now();
    server.close_stdin();
    // The short call is let finish and is answered; the held one is cancelled.
    let response = server.response(2);
    assert_eq!(text(&response), "slept 100 ms");
    assert!(server.wait().success());
    let took = closed.elapsed();
    assert!(
        took < Duration::from_secs(10),
        "exited {took:?} after the input ended"
    );
}

fn alive_tasks(peer: &mut Peer) -> u64 {
    let reply = peer.call("tools/call", json!({"name": "alive_tasks"}));
    reply.result()["content"][0]["text"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .expect("a count")
}

#[test]
fn over_http_a_dropped_call_leaves_no_task_behind() {
    for version in ["2025-11-25", MODERN] {
        let mut peer = Peer::open(
            env!("CARGO_BIN_EXE_catalogue").as_ref(),
            Transport::Http,
            version,
            json!({}),
        );
        let baseline = alive_tasks(&mut peer);
        for i in 0..3 {
            let message = json!({
                "jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
                "params": peer.params(json!({"name": "hold"})),
            });
            // The client sends the call and hangs up before any answer.
            let mut tcp = std::net::TcpStream::connect(peer.http().addr()).unwrap();
            tcp.write_all(&peer.http_post(&message).to_bytes()).unwrap();
            std::thread::sleep(Duration::from_millis(100));
            drop(tcp);
        }
        if !peer.is_modern() {
            // A handshake-era client that leaves ends its session; a disconnect alone is
            // not a cancellation in that era.
            let session = peer.session_id().expect("a session").to_owned();
            let ended = peer
                .http()
                .request("DELETE", "/mcp")
                .header("Mcp-Session-Id", &session)
                .header("MCP-Protocol-Version", version)
                .send();
            assert_eq!(ended.status, 200, "{ended:?}");
            peer.handshake();
        }
        let deadline = Instant::now() + mcp_tests::TIMEOUT;
        loop {
            let now = alive_tasks(&mut peer);
            if now <= baseline {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{now} tasks alive, {baseline} before ({version})"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[test]
fn a_policy_refuses_calls_with_a_machine_readable_code_naming_its_stage() {
    let mut server = catalogue(&[
        ("POLICY_DENY", "explode,toggle_*"),
        ("POLICY_SCOPES", "route=routing"),
    ]);
    let refused = call(&mut server, 1, "explode", json!({}));
    assert_eq!(
        refused["result"]["isError"], true,
        "a tool error, not a JSON-RPC one"
    );
    let why = &refused["result"]["_meta"]["mcp-runtime/error"];
    assert_eq!(why["code"], "permission_denied");
    assert_eq!(why["stage"], "deny_list");
    let refused = call(
        &mut server,
        2,
        "route",
        json!({"region": "eu", "query": "q"}),
    );
    let why = &refused["result"]["_meta"]["mcp-runtime/error"];
    assert_eq!(why["stage"], "scopes", "{refused}");
    assert!(why["reason"].as_str().unwrap().contains("routing"));
    still_serves(&mut server, 3);
}

#[test]
fn every_tool_call_leaves_one_audit_record() {
    let scratch = Scratch::new("reliability");
    let path = scratch.path("audit.jsonl");
    let path_text = path.to_str().unwrap();
    let mut server = catalogue(&[("AUDIT_FILE", path_text), ("POLICY_DENY", "explode")]);
    call(&mut server, 1, "fast", json!({}));
    call(&mut server, 2, "fail", json!({"why": "no"}));
    call(&mut server, 3, "explode", json!({}));
    server.request(4, "tools/call", json!({"name": "hold"}));
    server.notify("notifications/cancelled", json!({"requestId": 4}));
    still_serves(&mut server, 5);
    server.close_stdin();
    assert!(server.wait().success());
    let mut text = String::new();
    std::fs::File::open(&path)
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let outcome = |tool: &str| -> Vec<&str> {
        records
            .iter()
            .filter(|r| r["tool"] == tool)
            .map(|r| r["outcome"].as_str().unwrap())
            .collect()
    };
    assert_eq!(outcome("fast"), ["ok", "ok"]);
    assert_eq!(outcome("fail"), ["tool_error"]);
    assert_eq!(outcome("explode"), ["denied"]);
    assert_eq!(outcome("hold"), ["cancelled"]);
    let denied = records.iter().find(|r| r["tool"] == "explode").unwrap();
    assert_eq!(denied["refusedBy"], "deny_list");
    for r in &records {
        assert_eq!(r["arguments"].as_str().unwrap().len(), 32, "{r}");
        assert!(r["time"].as_str().unwrap().ends_with('Z'));
        assert!(r["durationMs"].as_f64().unwrap() >= 0.0);
    }
}

#[test]
fn mcp_trace_logs_every_message_both_ways_and_leaves_stdout_alone() {
    let scratch = Scratch::new("reliability");
    let path = scratch.path("trace.log");
    let mut server = catalogue(&[("MCP_TRACE", path.to_str().unwrap())]);
    let response = call(&mut server, 1, "fast", json!({}));
    assert_eq!(text(&response), "fast");
    server.close_stdin();
    assert!(server.wait().success());
    let log = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert!(
        lines
            .iter()
            .any(|l| l.contains(" <- ") && l.contains("\"method\":\"initialize\"")),
        "{log}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains(" -> ") && l.contains("\"protocolVersion\"")),
        "{log}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains(" -> ") && l.contains("\"text\":\"fast\""))
    );
    assert!(lines.iter().all(|l| l.starts_with("mcp-trace ")));

    // Over HTTP.
    std::fs::remove_file(&path).unwrap();
    let http = HttpServer::spawn(
        env!("CARGO_BIN_EXE_catalogue").as_ref(),
        &[("MCP_TRACE", path.to_str().unwrap())],
    );
    let response = http
        .request("POST", "/mcp")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", MODERN)
        .header("Mcp-Method", "server/discover")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {}}}}),
        )
        .send();
    assert_eq!(response.status, 200);
    let log = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        log.contains(" <- ") && log.contains("supportedVersions"),
        "{log}"
    );
}

/// Opens a handshake-era HTTP session and returns its id.
/// An `initialize` POST from the client named `client`.
fn initialize(http: &HttpServer, client: &str) -> mcp_tests::http::Response {
    http.request("POST", "/mcp")
        .header("Accept", "application/json, text/event-stream")
        .json(&json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": client, "version": "1"}},
        }))
        .send()
}

fn open_session(http: &HttpServer, n: usize) -> String {
    let response = initialize(http, &format!("client-{n}"));
    assert_eq!(response.status, 200, "{response:?}");
    response
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned()
}

fn call_in(http: &HttpServer, session: &str, id: i64) -> u16 {
    let response = http
        .request("POST", "/mcp")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-11-25")
        .header("Mcp-Session-Id", session)
        .json(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                      "params": {"name": "fast", "arguments": {}}}))
        .send();
    let status = response.status;
    if status == 200 {
        let body = response.json();
        assert_eq!(body["result"]["content"][0]["text"], "fast", "{body}");
    }
    status
}

#[test]
fn a_thousand_http_sessions_are_held_and_served() {
    let http = HttpServer::spawn(env!("CARGO_BIN_EXE_catalogue").as_ref(), &[]);
    let sessions: Vec<String> = (0..1000).map(|n| open_session(&http, n)).collect();
    // Served concurrently, from eight clients at once.
    std::thread::scope(|scope| {
        for chunk in sessions.chunks(125) {
            let http = &http;
            scope.spawn(move || {
                for (i, session) in chunk.iter().enumerate() {
                    assert_eq!(call_in(http, session, i as i64 + 1), 200);
                }
            });
        }
    });
}

#[test]
fn the_session_table_is_bounded_and_the_longest_idle_session_goes_first() {
    let http = HttpServer::spawn(
        env!("CARGO_BIN_EXE_catalogue").as_ref(),
        &[("HTTP_MAX_SESSIONS", "50")],
    );
    // The table keeps idle times to the millisecond: of two sessions opened within the same
    // one, either may go first. A pause of two between openings puts each in a millisecond
    // of its own, however fast or slow the machine.
    let sessions: Vec<String> = (0..60)
        .map(|n| {
            std::thread::sleep(Duration::from_millis(2));
            open_session(&http, n)
        })
        .collect();
    // The ten opened first were idle the longest: they were ended to make room.
    for session in &sessions[..10] {
        assert_eq!(call_in(&http, session, 1), 404);
    }
    for session in &sessions[10..] {
        assert_eq!(call_in(&http, session, 1), 200);
    }
}

#[test]
fn a_session_serving_a_request_is_not_evicted_to_make_room() {
    let http = HttpServer::spawn(
        env!("CARGO_BIN_EXE_catalogue").as_ref(),
        &[("HTTP_MAX_SESSIONS", "1")],
    );
    let busy = open_session(&http, 0);
    // A call that waits until it is cancelled keeps the one session busy.
    // Sent on a connection of its own, whose response does not start until the call ends.
    let started_before = holds_started(&http);
    let mut holding = std::net::TcpStream::connect(http.addr()).expect("connect");
    holding
        .write_all(
            &http
                .request("POST", "/mcp")
                .header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", "2025-11-25")
                .header("Mcp-Session-Id", &busy)
                .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                              "params": {"name": "hold_watched", "arguments": {}}}))
                .to_bytes(),
        )
        .expect("send the call");
    let deadline = Instant::now() + mcp_tests::TIMEOUT;
    while holds_started(&http) == started_before {
        assert!(Instant::now() < deadline, "the call never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The table is full of busy sessions: a new one must wait, and the busy one lives.
    let refused = initialize(&http, "late");
    assert_eq!(refused.status, 503, "{refused:?}");
    assert!(
        refused.json()["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("busy")),
    );
    // Once the call is over (the client cancels it), the idle session makes room.
    let cancelled = http
        .request("POST", "/mcp")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-11-25")
        .header("Mcp-Session-Id", &busy)
        .json(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": {"requestId": 1}}),
        )
        .send();
    assert_eq!(cancelled.status, 202, "{cancelled:?}");
    drop(holding);
    let deadline = Instant::now() + mcp_tests::TIMEOUT;
    loop {
        let response = initialize(&http, "later");
        if response.status == 200 {
            break;
        }
        assert_eq!(response.status, 503, "{response:?}");
        assert!(
            Instant::now() < deadline,
            "the idle session never made room"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(call_in(&http, &busy, 2), 404, "the idle session went");
}

#[test]
fn stray_prints_on_standard_output_land_on_standard_error_and_never_between_frames() {
    let mut server =
        StdioServer::spawn_reading_stderr(env!("CARGO_BIN_EXE_catalogue").as_ref(), &[]);
    server.initialize("2025-11-25");
    let response = call(&mut server, 1, "print_stray", json!({"text": "stray text"}));
    assert_eq!(text(&response), "printed", "{response}");
    // Every line the client reads is a frame: `recv` fails on any other.
    still_serves(&mut server, 2);
    server.close_stdin();
    let after = server.remaining_messages();
    assert!(after.is_empty(), "nothing more came: {after:?}");
    assert!(server.wait().success());
    // What was printed is in the server's log.
    server.wait_for_stderr("stray text (println)");
    server.wait_for_stderr("stray text (print, no newline)");
    server.wait_for_stderr("stray text (child process)");
}

/// How many `hold_watched` calls the server has started, asked in the stateless era (which
/// needs no session).
fn holds_started(http: &HttpServer) -> u64 {
    let response = http
        .request("POST", "/mcp")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", MODERN)
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "holds_started")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "holds_started",
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": {"name": "e2e", "version": "1"},
                },
            }}),
        )
        .send();
    let body = response.json();
    body["result"]["content"][0]["text"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("a count: {body}"))
}
