//! `examples/notes`, the multi-tenant notes server, as its users meet it: over Streamable
//! HTTP with two users' bearer tokens, over stdio as the one local user, and killed with
//! SIGKILL in the middle of its work.

use std::ffi::OsStr;

use mcp_tests::http::{HttpServer, Session};
use mcp_tests::{Scratch, StdioServer, workspace_binary};
use serde_json::{Value, json};

const TOKENS: &str = "alice:token-a,bob:token-b";

fn notes(db: &std::path::Path) -> HttpServer {
    HttpServer::spawn_with_args(
        &workspace_binary("notes"),
        &[OsStr::new("--db"), db.as_os_str()],
        &[("NOTES_TOKENS", TOKENS)],
    )
}

fn open<'a>(server: &'a HttpServer, token: &str) -> Session<'a> {
    Session::open_with(server, "2025-11-25", json!({}), Some(token))
}

/// The structured result of a call that succeeded.
fn ok(response: &Value) -> &Value {
    assert_eq!(response["result"]["isError"], Value::Null, "{response}");
    &response["result"]["structuredContent"]
}

/// The text of a call that failed as a tool error.
fn tool_error(response: &Value) -> &str {
    assert_eq!(response["result"]["isError"], true, "{response}");
    response["result"]["content"][0]["text"].as_str().unwrap()
}

fn add(session: &Session<'_>, id: i64, title: &str) -> i64 {
    let added = session.call(
        id,
        "add_note",
        json!({"title": title, "body": format!("about {title}")}),
    );
    ok(&added)["id"].as_i64().unwrap()
}

fn titles(listed: &Value) -> Vec<&str> {
    listed["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["title"].as_str().unwrap())
        .collect()
}

#[test]
fn each_user_sees_only_their_own_notes_and_another_users_note_is_not_found() {
    let scratch = Scratch::new("notes");
    let server = notes(&scratch.path("notes.db"));
    let (alice, bob) = (open(&server, "token-a"), open(&server, "token-b"));
    let milk = add(&alice, 1, "milk");
    add(&alice, 2, "eggs");
    let secret = add(&bob, 3, "bob's secret");
    assert_ne!(secret, milk);
    assert_eq!(
        titles(ok(&alice.call(4, "list_notes", json!({})))),
        ["milk", "eggs"]
    );
    assert_eq!(
        titles(ok(&bob.call(5, "list_notes", json!({})))),
        ["bob's secret"]
    );

    let note = alice.call(6, "get_note", json!({"id": milk}));
    assert_eq!(
        ok(&note),
        &json!({"id": milk, "title": "milk", "body": "about milk"})
    );
    // Bob's note is, to Alice, exactly what a note that never existed is.
    let theirs = tool_error(&alice.call(7, "get_note", json!({"id": secret}))).to_owned();
    let nowhere = tool_error(&alice.call(8, "get_note", json!({"id": 999_999}))).to_owned();
    assert_eq!(theirs, format!("note {secret} not found"));
    assert_eq!(nowhere, "note 999999 not found");
    assert_eq!(
        tool_error(&alice.call(9, "delete_note", json!({"id": secret}))),
        format!("note {secret} not found")
    );
    assert_eq!(
        tool_error(&alice.call(10, "pin", json!({"id": secret}))),
        format!("note {secret} not found")
    );
    let read = alice.request(
        11,
        "resources/read",
        json!({"uri": format!("notes://{secret}")}),
    );
    assert_eq!(read["error"]["code"], -32002, "{read}");
    let read = alice.request(
        12,
        "resources/read",
        json!({"uri": format!("notes://{milk}")}),
    );
    assert_eq!(
        read["result"]["contents"][0]["text"],
        "# milk\n\nabout milk\n"
    );
    assert_eq!(read["result"]["contents"][0]["mimeType"], "text/markdown");
    let prompt = bob.request(13, "prompts/get", json!({"name": "summarize_notes"}));
    let text = prompt["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(
        text.contains("bob's secret") && !text.contains("milk"),
        "{text}"
    );
    // Bob's note is still there for Bob.
    assert_eq!(
        ok(&bob.call(14, "get_note", json!({"id": secret})))["title"],
        "bob's secret"
    );
    let deleted = alice.call(15, "delete_note", json!({"id": milk}));
    assert_eq!(
        deleted["result"]["content"][0]["text"],
        format!("deleted note {milk}")
    );
    assert_eq!(
        titles(ok(&alice.call(16, "list_notes", json!({})))),
        ["eggs"]
    );
}

#[test]
fn pins_belong_to_one_session_and_end_with_it() {
    let scratch = Scratch::new("notes");
    let server = notes(&scratch.path("notes.db"));
    let (first, second) = (open(&server, "token-a"), open(&server, "token-a"));
    let a = add(&first, 1, "a");
    let b = add(&first, 2, "b");
    first.call(3, "pin", json!({"id": b}));
    first.call(4, "pin", json!({"id": a}));
    second.call(5, "pin", json!({"id": a}));
    assert_eq!(titles(ok(&first.call(6, "pinned", json!({})))), ["b", "a"]);
    assert_eq!(titles(ok(&second.call(7, "pinned", json!({})))), ["a"]);
    // A deleted note leaves the pins.
    second.call(8, "delete_note", json!({"id": b}));
    assert_eq!(titles(ok(&first.call(9, "pinned", json!({})))), ["a"]);

    // The session ends: its pins with it.
    let ended = first.headers(server.request("DELETE", "/mcp")).send();
    assert_eq!(ended.status, 200, "{ended:?}");
    let gone = first
        .post(&json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
                      "params": {"name": "pinned", "arguments": {}}}))
        .send();
    assert_eq!(gone.status, 404, "an ended session is unknown: {gone:?}");
    let fresh = open(&server, "token-a");
    assert_eq!(
        titles(ok(&fresh.call(11, "pinned", json!({})))),
        Vec::<&str>::new()
    );
    assert_eq!(
        titles(ok(&fresh.call(12, "list_notes", json!({})))),
        ["a"],
        "the notes stay"
    );
}

#[test]
fn notes_survive_the_server_being_killed() {
    let scratch = Scratch::new("notes");
    let db = scratch.path("notes.db");
    let server = notes(&db);
    let alice = open(&server, "token-a");
    for (i, title) in ["one", "two", "three"].into_iter().enumerate() {
        add(&alice, i as i64 + 1, title);
    }
    // SIGKILL, as a crash would: no shutdown, nothing flushed on the way out.
    drop(alice);
    drop(server);
    let server = notes(&db);
    let alice = open(&server, "token-a");
    assert_eq!(
        titles(ok(&alice.call(1, "list_notes", json!({})))),
        ["one", "two", "three"]
    );
}

#[test]
fn over_http_a_request_without_a_known_token_is_refused() {
    let scratch = Scratch::new("notes");
    let server = notes(&scratch.path("notes.db"));
    let response = server
        .request("POST", "/mcp")
        .header("Accept", "application/json, text/event-stream")
        .header("Authorization", "Bearer token-c")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                 "clientInfo": {"name": "t", "version": "1"}}}))
        .send();
    assert_eq!(response.status, 401, "{response:?}");
}

#[test]
fn over_stdio_the_notes_are_the_local_users() {
    let scratch = Scratch::new("notes");
    let db = scratch.path("notes.db");
    let mut server = StdioServer::spawn_with_args(
        &workspace_binary("notes"),
        &[OsStr::new("--db"), db.as_os_str()],
    );
    server.initialize("2025-11-25");
    server.request(
        1,
        "tools/call",
        json!({"name": "add_note", "arguments": {"title": "t", "body": "b"}}),
    );
    let id = server.response(1)["result"]["structuredContent"]["id"].clone();
    assert!(id.is_i64(), "{id}");
    server.request(
        2,
        "tools/call",
        json!({"name": "pin", "arguments": {"id": id}}),
    );
    server.response(2);
    server.request(3, "tools/call", json!({"name": "pinned", "arguments": {}}));
    assert_eq!(
        titles(&server.response(3)["result"]["structuredContent"]),
        ["t"]
    );
    drop(server);
    // The HTTP users do not see the local user's notes.
    let http = notes(&db);
    let alice = open(&http, "token-a");
    assert_eq!(
        titles(ok(&alice.call(1, "list_notes", json!({})))),
        Vec::<&str>::new()
    );
}

#[test]
fn with_metrics_the_operator_sees_each_tools_calls_behind_the_same_tokens() {
    let scratch = Scratch::new("notes-metrics");
    let db = scratch.path("notes.db");
    let server = HttpServer::spawn_with_args(
        &workspace_binary("notes"),
        &[OsStr::new("--db"), db.as_os_str(), OsStr::new("--metrics")],
        &[("NOTES_TOKENS", TOKENS)],
    );
    let alice = open(&server, "token-a");
    add(&alice, 1, "milk");
    add(&alice, 2, "eggs");
    let missing = alice.call(3, "get_note", json!({"id": 999}));
    assert_eq!(tool_error(&missing), "note 999 not found");
    assert_eq!(server.request("GET", "/metrics").send().status, 401);
    let text = server
        .request("GET", "/metrics")
        .header("Authorization", "Bearer token-b")
        .send()
        .text();
    for line in [
        "mcp_server_operation_duration_seconds_count{mcp_method_name=\"tools/call\",gen_ai_tool_name=\"add_note\"} 2",
        "mcp_server_operation_duration_seconds_count{mcp_method_name=\"tools/call\",gen_ai_tool_name=\"get_note\",error_type=\"tool_error\"} 1",
        "mcp_server_sessions 1",
    ] {
        assert!(text.contains(line), "`{line}` in:\n{text}");
    }
}

#[test]
fn note_ids_tell_no_user_how_many_notes_others_made() {
    let scratch = Scratch::new("notes-ids");
    let server = notes(&scratch.path("notes.db"));
    let (alice, bob) = (open(&server, "token-a"), open(&server, "token-b"));
    let alices: Vec<i64> = (1..=3).map(|i| add(&alice, i, "a")).collect();
    let bobs = add(&bob, 1, "b");
    // One sequence for all users would have given Bob 4: three notes made before his.
    assert!(
        !alices.contains(&bobs) && bobs != alices[2] + 1 && alices[1] != alices[0] + 1,
        "{alices:?} then {bobs}"
    );
    // Exact in a JavaScript client, whose numbers are doubles.
    for id in alices.iter().chain([&bobs]) {
        assert!((1..1 << 53).contains(id), "{id}");
    }
    assert_eq!(
        ok(&bob.call(2, "get_note", json!({"id": bobs})))["title"],
        "b"
    );
}

#[test]
fn a_note_over_the_size_limits_is_refused_naming_the_limit() {
    let scratch = Scratch::new("notes-size");
    let server = notes(&scratch.path("notes.db"));
    let alice = open(&server, "token-a");
    let body = "x".repeat(64 * 1024 + 1);
    let refused = alice.call(1, "add_note", json!({"title": "big", "body": body}));
    assert_eq!(
        tool_error(&refused),
        "the body has 65537 bytes; a note may hold at most 65536: split it into several notes"
    );
    let title = "t".repeat(201);
    let refused = alice.call(2, "add_note", json!({"title": title, "body": "b"}));
    assert!(
        tool_error(&refused)
            .starts_with("the title has 201 characters; a title may have at most 200"),
        "{refused}"
    );
    // At the limits, a note goes in.
    let body = "x".repeat(64 * 1024);
    let title = "t".repeat(200);
    let id = ok(&alice.call(3, "add_note", json!({"title": title, "body": body})))["id"].clone();
    assert_eq!(titles(ok(&alice.call(4, "list_notes", json!({})))), [title]);
    assert_eq!(
        ok(&alice.call(5, "get_note", json!({"id": id})))["body"]
            .as_str()
            .map(str::len),
        Some(64 * 1024)
    );
}

#[test]
fn each_user_keeps_at_most_256_notes_and_other_users_are_not_held_back() {
    let scratch = Scratch::new("notes-count");
    let server = notes(&scratch.path("notes.db"));
    let (alice, bob) = (open(&server, "token-a"), open(&server, "token-b"));
    let mut first = None;
    for i in 1..=256 {
        first.get_or_insert(add(&alice, i, &format!("n{i}")));
    }
    let refused = alice.call(257, "add_note", json!({"title": "one more", "body": "b"}));
    assert_eq!(
        tool_error(&refused),
        "you have 256 notes, the most one user may keep: delete some with delete_note first"
    );
    add(&bob, 1, "bob's");
    // Deleting one makes room for one.
    alice.call(258, "delete_note", json!({"id": first.unwrap()}));
    add(&alice, 259, "one more");
    let refused = alice.call(
        260,
        "add_note",
        json!({"title": "and another", "body": "b"}),
    );
    assert!(
        tool_error(&refused).starts_with("you have 256 notes"),
        "{refused}"
    );
    assert_eq!(
        titles(ok(&alice.call(261, "list_notes", json!({})))).len(),
        256
    );
}

/// Clears a process's peak resident memory (`VmHWM`, through `/proc/PID/clear_refs`): the
/// peak read next is the most it held from now on.
fn reset_peak(pid: u32) {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").expect("clear_refs");
}

/// A process's peak resident memory, in KiB.
fn peak_kib(pid: u32) -> u64 {
    mcp_tests::group::memory_kib(pid, "VmHWM").expect("VmHWM")
}

#[test]
fn listing_notes_reads_titles_and_not_bodies() {
    let scratch = Scratch::new("notes-list");
    let server = notes(&scratch.path("notes.db"));
    let alice = open(&server, "token-a");
    // 16 MiB of bodies: the most one user may keep.
    let body = "x".repeat(64 * 1024);
    for i in 1..=256 {
        let added = alice.call(
            i,
            "add_note",
            json!({"title": format!("n{i}"), "body": body}),
        );
        ok(&added);
    }
    reset_peak(server.pid());
    let before = peak_kib(server.pid());
    let listed = alice.call(300, "list_notes", json!({}));
    assert_eq!(titles(ok(&listed)).len(), 256);
    let grew = peak_kib(server.pid()).saturating_sub(before);
    // Loading the bodies to drop them would take 16 MiB at once; the titles take kilobytes.
    assert!(grew < 6 * 1024, "listing titles took {grew} KiB more");
}

#[test]
fn the_summary_prompt_holds_at_most_128_kib_of_notes_and_says_what_it_left_out() {
    let scratch = Scratch::new("notes-prompt");
    let server = notes(&scratch.path("notes.db"));
    let alice = open(&server, "token-a");
    let body = "x".repeat(60 * 1024);
    for i in 1..=5 {
        add_with_body(&alice, i, &format!("n{i}"), &body);
    }
    let prompt = alice.request(10, "prompts/get", json!({"name": "summarize_notes"}));
    let text = prompt["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(text.len() < 129 * 1024, "{} bytes", text.len());
    // Two whole notes, the third cut, the last two left out.
    assert!(text.contains("## n1 ") && text.contains("## n3 ") && !text.contains("## n4 "));
    assert!(
        text.ends_with(
            "(Only the first 131072 bytes of notes are shown: the last note above is cut \
             short, and 2 more notes are left out.)\n"
        ),
        "{}",
        &text[text.len() - 200..]
    );
}

fn add_with_body(session: &Session<'_>, id: i64, title: &str, body: &str) -> i64 {
    let added = session.call(id, "add_note", json!({"title": title, "body": body}));
    ok(&added)["id"].as_i64().unwrap()
}
