//! `subscriptions/listen` (2026-07-28) over both transports: the acknowledgement first, every
//! notification tagged with its subscription, only what the filter asked for; and how a
//! subscription ends — cancelled by the client, or closed by the server.

use std::collections::VecDeque;
use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use mcp_tests::assert_valid;
use mcp_tests::http::{EventStream, Next};
use mcp_tests::peer::{MODERN, Peer, Reply, Transport};
use serde_json::{Value, json};

const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

fn catalogue(transport: Transport) -> Peer {
    Peer::open(
        env!("CARGO_BIN_EXE_catalogue").as_ref(),
        transport,
        MODERN,
        json!({}),
    )
}

/// An open subscription, over either transport (on stdio, with what the pipe delivered
/// while the test waited for something else).
enum Listening {
    Stdio(VecDeque<Value>),
    Http(EventStream),
}

/// Opens a subscription with `filter` and returns it with its acknowledgement.
fn listen(peer: &mut Peer, id: i64, filter: Value) -> (Listening, Value) {
    let params = peer.params(json!({ "notifications": filter }));
    let message =
        json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params});
    match peer.transport {
        Transport::Stdio => {
            peer.stdio().send(&message);
            let ack = peer.stdio().recv();
            (Listening::Stdio(VecDeque::new()), ack)
        }
        Transport::Http => {
            let response = peer.http_post(&message).send();
            assert_eq!(response.status, 200, "{response:?}");
            assert_eq!(response.media_type(), Some("text/event-stream"));
            assert_eq!(response.header("x-accel-buffering"), Some("no"));
            let mut events = response.events();
            let ack = next_message(&mut events, mcp_tests::TIMEOUT).expect("the acknowledgement");
            (Listening::Http(events), ack)
        }
    }
}

fn next_message(events: &mut EventStream, within: Duration) -> Option<Value> {
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match events.next_within(left) {
            Next::Event(e) if e.data.as_deref().is_some_and(|d| !d.is_empty()) => {
                return Some(e.json());
            }
            Next::Event(_) => {}
            Next::End | Next::TimedOut => return None,
        }
    }
}

/// The next message of the subscription within `within`, if any.
fn heard(peer: &mut Peer, listening: &mut Listening, within: Duration) -> Option<Value> {
    match listening {
        Listening::Stdio(queue) => {
            queue.extend(peer.stdio().take_backlog());
            queue
                .pop_front()
                .or_else(|| peer.stdio().recv_line_within(within))
        }
        Listening::Http(events) => next_message(events, within),
    }
}

/// Makes a call while a subscription is open. On stdio a notification of the subscription
/// may come before the call's response, and is then among the reply's messages: it is kept
/// for [`heard`].
fn call_while_listening(
    peer: &mut Peer,
    listening: &mut Listening,
    method: &str,
    params: Value,
) -> Reply {
    let reply = peer.call(method, params);
    if let Listening::Stdio(queue) = listening {
        queue.extend(reply.notifications.iter().cloned());
    }
    reply
}

fn tag(message: &Value) -> &Value {
    &message["params"]["_meta"][SUBSCRIPTION_ID]
}

#[test]
fn the_acknowledgement_comes_first_and_names_what_will_be_sent() {
    for transport in [Transport::Stdio, Transport::Http] {
        let mut peer = catalogue(transport);
        let (_listening, ack) = listen(
            &mut peer,
            41,
            json!({"toolsListChanged": true, "resourceSubscriptions": ["test://watched"], "somethingElse": true}),
        );
        assert_valid(MODERN, "SubscriptionsAcknowledgedNotification", &ack);
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        assert_eq!(tag(&ack), &json!(41), "{ack}");
        assert_eq!(
            ack["params"]["notifications"],
            json!({"toolsListChanged": true, "resourceSubscriptions": ["test://watched"]})
        );
    }
}

#[test]
fn a_listener_hears_only_what_it_asked_for_tagged_with_its_id() {
    for transport in [Transport::Stdio, Transport::Http] {
        let mut peer = catalogue(transport);
        let (mut tools, _) = listen(&mut peer, 7, json!({"toolsListChanged": true}));
        // On stdio every subscription shares the pipe, so one is enough there.
        let mut others = match transport {
            Transport::Stdio => None,
            Transport::Http => Some((
                listen(&mut peer, 8, json!({"promptsListChanged": true})).0,
                listen(
                    &mut peer,
                    9,
                    json!({"resourceSubscriptions": ["test://watched"]}),
                )
                .0,
            )),
        };
        let reply = call_while_listening(
            &mut peer,
            &mut tools,
            "tools/call",
            json!({"name": "toggle_tool", "arguments": {"name": "fast", "enabled": false}}),
        );
        assert_eq!(reply.result()["content"][0]["text"], "changed: true");
        let changed = heard(&mut peer, &mut tools, mcp_tests::TIMEOUT).expect("a change");
        assert_valid(MODERN, "ToolListChangedNotification", &changed);
        assert_eq!(changed["method"], "notifications/tools/list_changed");
        assert_eq!(tag(&changed), &json!(7), "{changed}");
        call_while_listening(
            &mut peer,
            &mut tools,
            "tools/call",
            json!({"name": "touch_watched"}),
        );
        match &mut others {
            None => {
                // Nothing else on the pipe: the resource was not asked for.
                let more = heard(&mut peer, &mut tools, Duration::from_millis(300));
                assert!(more.is_none(), "{more:?}");
            }
            Some((prompts, watched)) => {
                let updated = heard(&mut peer, watched, mcp_tests::TIMEOUT).expect("the update");
                assert_eq!(updated["method"], "notifications/resources/updated");
                assert_eq!(updated["params"]["uri"], "test://watched");
                assert_eq!(tag(&updated), &json!(9));
                let nothing = heard(&mut peer, prompts, Duration::from_millis(300));
                assert!(nothing.is_none(), "prompts were not changed: {nothing:?}");
                let nothing = heard(&mut peer, &mut tools, Duration::from_millis(100));
                assert!(
                    nothing.is_none(),
                    "the resource was not asked for: {nothing:?}"
                );
            }
        }
    }
}

#[test]
fn on_stdio_a_cancelled_subscription_falls_silent_and_is_not_answered() {
    let mut peer = catalogue(Transport::Stdio);
    let (mut listening, _) = listen(&mut peer, 5, json!({"toolsListChanged": true}));
    peer.notify("notifications/cancelled", json!({"requestId": 5}));
    call_while_listening(
        &mut peer,
        &mut listening,
        "tools/call",
        json!({"name": "toggle_tool", "arguments": {"name": "fast", "enabled": false}}),
    );
    let after = heard(&mut peer, &mut listening, Duration::from_millis(300));
    assert!(after.is_none(), "a cancelled subscription: {after:?}");
}

#[test]
fn on_stdio_the_end_of_input_ends_subscriptions_with_a_result() {
    let mut peer = catalogue(Transport::Stdio);
    listen(&mut peer, 8, json!({"toolsListChanged": true}));
    peer.stdio().close_stdin();
    let end = peer.stdio().response(8);
    assert_valid(MODERN, "SubscriptionsListenResultResponse", &end);
    assert_eq!(end["result"]["resultType"], "complete");
    assert_eq!(end["result"]["_meta"][SUBSCRIPTION_ID], 8);
    assert!(peer.stdio().wait().success());
}

#[test]
fn task_notifications_need_the_tasks_extension() {
    let mut peer = catalogue(Transport::Stdio);
    let (_, refused) = listen(&mut peer, 3, json!({"taskIds": ["t"]}));
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert_eq!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );
}

#[test]
fn a_filter_following_more_than_a_session_may_subscribe_to_is_refused() {
    for transport in [Transport::Stdio, Transport::Http] {
        let mut peer = catalogue(transport);
        let too_many: Vec<String> = (0..=mcp_runtime::MAX_SUBSCRIPTIONS)
            .map(|i| format!("test://r/{i}"))
            .collect();
        let refused = peer.call(
            "subscriptions/listen",
            json!({"notifications": {"resourceSubscriptions": too_many}}),
        );
        assert_eq!(refused.error_code(), -32602, "{refused:?}");
        let text = refused.message["error"]["message"].as_str().unwrap();
        assert!(
            text.contains("resourceSubscriptions") && text.contains("1024"),
            "{text}"
        );
        // The most is still accepted, and the server goes on serving.
        let most = &too_many[..mcp_runtime::MAX_SUBSCRIPTIONS];
        let (_listening, ack) = listen(&mut peer, 6, json!({"resourceSubscriptions": most}));
        assert_eq!(
            ack["params"]["notifications"]["resourceSubscriptions"]
                .as_array()
                .map(Vec::len),
            Some(mcp_runtime::MAX_SUBSCRIPTIONS)
        );
        assert!(peer.call("tools/list", json!({})).result()["tools"].is_array());
    }
}

/// How many `hold` calls the server saw cancelled.
fn holds_cancelled(peer: &mut Peer) -> u64 {
    let reply = peer.call("tools/call", json!({"name": "holds_cancelled"}));
    reply.result()["content"][0]["text"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .expect("a count")
}

/// Waits until `expected` calls of `hold_watched` have started.
fn wait_for_started_holds(peer: &mut Peer, expected: u64) {
    let deadline = Instant::now() + mcp_tests::TIMEOUT;
    loop {
        let reply = peer.call("tools/call", json!({"name": "holds_started"}));
        let started: u64 = reply.result()["content"][0]["text"]
            .as_str()
            .and_then(|t| t.parse().ok())
            .expect("a count");
        if started >= expected {
            return;
        }
        assert!(Instant::now() < deadline, "the call never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_for_holds(peer: &mut Peer, expected: u64) {
    let deadline = Instant::now() + mcp_tests::TIMEOUT;
    while holds_cancelled(peer) < expected {
        assert!(
            Instant::now() < deadline,
            "the handler was not cancelled when its client left"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn on_http_a_client_that_closes_its_connection_cancels_its_request() {
    let mut peer = catalogue(Transport::Http);
    assert_eq!(holds_cancelled(&mut peer), 0);
    // Waiting for a JSON answer: the client hangs up before any byte of the response.
    let message = json!({
        "jsonrpc": "2.0", "id": 99, "method": "tools/call",
        "params": peer.params(json!({"name": "hold_watched"})),
    });
    let body = message.to_string();
    let addr = peer.http().addr();
    let mut tcp = TcpStream::connect(addr).expect("connect");
    write!(
        tcp,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {MODERN}\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: hold_watched\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("send");
    // A hang-up before the call starts would cancel nothing.
    wait_for_started_holds(&mut peer, 1);
    drop(tcp);
    wait_for_holds(&mut peer, 1);

    // On a stream: the call sent a notification first, then the client left.
    let message = json!({
        "jsonrpc": "2.0", "id": 100, "method": "subscriptions/listen",
        "params": peer.params(json!({"notifications": {"toolsListChanged": true}})),
    });
    let response = peer.http_post(&message).send();
    let mut events = response.events();
    assert!(next_message(&mut events, mcp_tests::TIMEOUT).is_some());
    events.disconnect();
    // The server goes on serving, and a change with no one left to hear it is harmless.
    peer.call(
        "tools/call",
        json!({"name": "toggle_tool", "arguments": {"name": "fast", "enabled": false}}),
    );
    assert_eq!(holds_cancelled(&mut peer), 1);
}

#[test]
fn on_http_get_and_delete_without_a_session_are_405() {
    let peer = catalogue(Transport::Http);
    for method in ["GET", "DELETE"] {
        let response = peer
            .http()
            .request(method, "/mcp")
            .header("Accept", "text/event-stream")
            .send();
        assert_eq!(response.status, 405, "{method}: {response:?}");
        assert_eq!(response.header("allow"), Some("POST"));
        let response = peer
            .http()
            .request(method, "/mcp")
            .header("Accept", "text/event-stream")
            .header("MCP-Protocol-Version", MODERN)
            .header("Mcp-Session-Id", "0123456789abcdef0123456789abcdef")
            .send();
        assert_eq!(response.status, 405, "{method} at {MODERN}: {response:?}");
    }
}
