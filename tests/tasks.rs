//! The tasks extension (`io.modelcontextprotocol/tasks`) over both transports: a call that
//! waits becomes a task, which the client polls, answers and cancels; clients that do not
//! declare the extension never see a task.

use std::time::{Duration, Instant};

use mcp_tests::peer::{MODERN, Peer, Transport};
use serde_json::{Value, json};

const EXTENSION: &str = "io.modelcontextprotocol/tasks";

fn with_tasks(transport: Transport) -> Peer {
    Peer::open(
        env!("CARGO_BIN_EXE_catalogue").as_ref(),
        transport,
        MODERN,
        json!({"elicitation": {}, "extensions": {EXTENSION: {}}}),
    )
}

fn without_tasks(transport: Transport) -> Peer {
    Peer::open(
        env!("CARGO_BIN_EXE_catalogue").as_ref(),
        transport,
        MODERN,
        json!({"elicitation": {}}),
    )
}

fn transports() -> [Transport; 2] {
    [Transport::Stdio, Transport::Http]
}

/// Polls `tasks/get` until the task's status is one of `statuses`.
fn poll_until(peer: &mut Peer, task_id: &str, statuses: &[&str]) -> Value {
    let deadline = Instant::now() + mcp_tests::TIMEOUT;
    loop {
        let reply = peer.call("tasks/get", json!({"taskId": task_id}));
        let task = reply.result().clone();
        assert_eq!(task["resultType"], "complete", "{task}");
        assert_eq!(task["taskId"], task_id);
        if statuses.iter().any(|s| task["status"] == *s) {
            return task;
        }
        assert!(
            Instant::now() < deadline,
            "still {}: {task}",
            task["status"]
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn created_task(peer: &mut Peer, name: &str, arguments: Value) -> Value {
    let reply = peer.call("tools/call", json!({"name": name, "arguments": arguments}));
    let task = reply.result().clone();
    assert_eq!(task["resultType"], "task", "{}: {task}", peer.label());
    for absent in ["result", "error", "inputRequests", "requestState"] {
        assert!(task.get(absent).is_none(), "{absent} in {task}");
    }
    task
}

#[test]
fn discover_declares_the_extension() {
    let mut peer = with_tasks(Transport::Stdio);
    let reply = peer.call("server/discover", json!({}));
    assert_eq!(
        reply.result()["capabilities"]["extensions"][EXTENSION],
        json!({})
    );
}

#[test]
fn a_call_that_waits_becomes_a_task_that_completes_with_its_result() {
    for transport in transports() {
        let mut peer = with_tasks(transport);
        let task = created_task(&mut peer, "chore", json!({"ms": 200}));
        assert_eq!(task["status"], "working");
        assert!(task["ttlMs"].as_u64().is_some_and(|t| t > 0), "{task}");
        assert!(task["pollIntervalMs"].as_u64().is_some(), "{task}");
        let created = task["createdAt"].as_str().unwrap();
        assert!(created.len() >= 20 && created.ends_with('Z'), "{created}");
        let id = task["taskId"].as_str().unwrap().to_owned();
        // The task exists the moment its handle is out.
        let now = peer.call("tasks/get", json!({"taskId": id}));
        assert_eq!(now.result()["taskId"], id.as_str());
        let done = poll_until(&mut peer, &id, &["completed", "failed", "cancelled"]);
        assert_eq!(done["status"], "completed", "{done}");
        assert_eq!(
            done["result"]["content"][0]["text"],
            "chore done after 200 ms"
        );
        assert!(done.get("error").is_none());
    }
}

#[test]
fn a_tool_error_completes_the_task_and_a_required_task_is_refused_without_the_extension() {
    for transport in transports() {
        let mut peer = with_tasks(transport);
        let task = created_task(&mut peer, "doomed_chore", json!({}));
        let id = task["taskId"].as_str().unwrap().to_owned();
        let done = poll_until(&mut peer, &id, &["completed", "failed"]);
        assert_eq!(
            done["status"], "completed",
            "a tool error is a result: {done}"
        );
        assert_eq!(done["result"]["isError"], true);

        let mut plain = without_tasks(transport);
        let reply = plain.call("tools/call", json!({"name": "doomed_chore"}));
        assert_eq!(reply.error_code(), -32021, "{reply:?}");
        assert_eq!(
            reply.message["error"]["data"]["requiredCapabilities"]["extensions"][EXTENSION],
            json!({})
        );
        if let Some(status) = reply.status {
            assert_eq!(status, 400);
        }
        // A tool that may be a task is simply answered for such a client.
        let reply = plain.call(
            "tools/call",
            json!({"name": "chore", "arguments": {"ms": 1}}),
        );
        assert_eq!(reply.result()["resultType"], "complete");
        assert_eq!(
            reply.result()["content"][0]["text"],
            "chore done after 1 ms"
        );
    }
}

#[test]
fn a_task_asks_through_input_required_and_resumes_on_update() {
    for transport in transports() {
        let mut peer = with_tasks(transport);
        let task = created_task(&mut peer, "ask_then_act", json!({"what": "deploy"}));
        let id = task["taskId"].as_str().unwrap().to_owned();
        let waiting = poll_until(&mut peer, &id, &["input_required"]);
        let requests = waiting["inputRequests"].as_object().unwrap();
        assert_eq!(requests.len(), 1, "{waiting}");
        let (key, request) = requests.iter().next().unwrap();
        assert_eq!(request["method"], "elicitation/create");
        assert_eq!(request["params"]["message"], "Shall I deploy?");
        // Answers to keys nobody asked are ignored, and still acknowledged.
        let ack = peer.call(
            "tasks/update",
            json!({"taskId": id, "inputResponses": {"unknown-key": {"ignored": true}}}),
        );
        assert_eq!(ack.result(), &json!({"resultType": "complete"}));
        assert_eq!(
            poll_until(&mut peer, &id, &["input_required"])["status"],
            "input_required"
        );
        let ack = peer.call(
            "tasks/update",
            json!({"taskId": id, "inputResponses": {key.clone(): {"action": "accept", "content": {"yes": true}}}}),
        );
        assert_eq!(ack.result(), &json!({"resultType": "complete"}));
        let done = poll_until(&mut peer, &id, &["completed", "failed", "cancelled"]);
        assert_eq!(done["result"]["content"][0]["text"], "did deploy", "{done}");
    }
}

#[test]
fn a_cancelled_task_stays_cancelled() {
    for transport in transports() {
        let mut peer = with_tasks(transport);
        let task = created_task(&mut peer, "chore", json!({"ms": 60_000}));
        let id = task["taskId"].as_str().unwrap().to_owned();
        let ack = peer.call("tasks/cancel", json!({"taskId": id}));
        assert_eq!(ack.result(), &json!({"resultType": "complete"}));
        let done = poll_until(&mut peer, &id, &["cancelled", "completed", "failed"]);
        assert_eq!(done["status"], "cancelled", "{done}");
        // Cancelling a finished task is acknowledged and changes nothing.
        let ack = peer.call("tasks/cancel", json!({"taskId": id}));
        assert_eq!(ack.result(), &json!({"resultType": "complete"}));
        assert_eq!(
            poll_until(&mut peer, &id, &["cancelled"])["status"],
            "cancelled"
        );
    }
}

#[test]
fn task_methods_refuse_unknown_tasks_and_clients_without_the_extension() {
    for transport in transports() {
        let mut peer = with_tasks(transport);
        let reply = peer.call("tasks/get", json!({"taskId": "no-such-task"}));
        assert_eq!(reply.error_code(), -32602, "{reply:?}");
        for removed in ["tasks/list", "tasks/result"] {
            let reply = peer.call(removed, json!({"taskId": "x"}));
            assert_eq!(reply.error_code(), -32601, "{removed}: {reply:?}");
        }
        let mut plain = without_tasks(transport);
        for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
            let reply = plain.call(method, json!({"taskId": "gate", "inputResponses": {}}));
            assert_eq!(reply.error_code(), -32021, "{method}: {reply:?}");
        }
    }
}

#[test]
fn the_handshake_era_runs_task_tools_directly() {
    let mut peer = Peer::open(
        env!("CARGO_BIN_EXE_catalogue").as_ref(),
        Transport::Stdio,
        "2025-11-25",
        json!({"extensions": {EXTENSION: {}}}),
    );
    let reply = peer.call(
        "tools/call",
        json!({"name": "chore", "arguments": {"ms": 1}}),
    );
    assert_eq!(
        reply.result()["content"][0]["text"],
        "chore done after 1 ms"
    );
    assert!(reply.result().get("resultType").is_none());
}

#[test]
fn a_task_listener_hears_every_change_of_its_task() {
    let mut peer = with_tasks(Transport::Stdio);
    let task = created_task(&mut peer, "ask_then_act", json!({"what": "ship"}));
    let id = task["taskId"].as_str().unwrap().to_owned();
    let listen = peer.take_id();
    let params = peer.params(json!({"notifications": {"taskIds": [id]}}));
    peer.stdio().request(listen, "subscriptions/listen", params);
    let ack = peer.stdio().recv();
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]));
    // Every notification that arrives while the test polls or calls is kept.
    let mut heard: Vec<Value> = Vec::new();
    fn poll(peer: &mut Peer, heard: &mut Vec<Value>, id: &str, status: &str) -> Value {
        let deadline = Instant::now() + mcp_tests::TIMEOUT;
        loop {
            let reply = peer.call("tasks/get", json!({"taskId": id}));
            heard.extend(reply.notifications.iter().cloned());
            if reply.result()["status"] == status {
                return reply.result().clone();
            }
            assert!(
                Instant::now() < deadline,
                "not {status}: {:?}",
                reply.result()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let waiting = poll(&mut peer, &mut heard, &id, "input_required");
    let key = waiting["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let ack = peer.call(
        "tasks/update",
        json!({"taskId": id, "inputResponses": {key: {"action": "decline"}}}),
    );
    assert_eq!(ack.result()["resultType"], "complete");
    heard.extend(ack.notifications);
    poll(&mut peer, &mut heard, &id, "completed");
    // The notification of the end may come after the poll that saw it: wait for it, then
    // make one more call, behind which anything sent after the end would show.
    let is_end =
        |n: &Value| n["method"] == "notifications/tasks" && n["params"]["status"] == "completed";
    let deadline = Instant::now() + mcp_tests::TIMEOUT;
    while !heard.iter().any(is_end) {
        assert!(
            Instant::now() < deadline,
            "no notification of the end: {heard:?}"
        );
        let reply = peer.call("tools/call", json!({"name": "fast"}));
        heard.extend(reply.notifications);
    }
    let reply = peer.call("tools/call", json!({"name": "fast"}));
    heard.extend(reply.notifications);
    let tasks: Vec<&Value> = heard
        .iter()
        .filter(|n| n["method"] == "notifications/tasks")
        .collect();
    let statuses: Vec<&Value> = tasks.iter().map(|n| &n["params"]["status"]).collect();
    // The task asked before the listener came; the answer and the end come after it, in
    // order, and nothing comes after the end.
    assert!(statuses.contains(&&json!("working")), "{statuses:?}");
    assert_eq!(statuses.last(), Some(&&json!("completed")), "{statuses:?}");
    assert_eq!(
        statuses
            .iter()
            .filter(|s| ***s == json!("completed"))
            .count(),
        1,
        "{statuses:?}"
    );
    for n in &tasks {
        assert_eq!(n["params"]["taskId"], id.as_str());
        assert_eq!(
            n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            json!(listen)
        );
    }
    let done = tasks.last().unwrap();
    assert_eq!(
        done["params"]["result"]["content"][0]["text"],
        "did not ship"
    );
}

/// Starts a chore that runs for ten minutes, as the caller with `token{caller}`.
fn long_chore(peer: &mut Peer, caller: usize) -> mcp_tests::peer::Reply {
    let auth = format!("Bearer token{caller}");
    peer.call_with_headers(
        "tools/call",
        json!({"name": "chore", "arguments": {"ms": 600_000}}),
        &[("Authorization", &auth)],
    )
}

#[test]
fn running_tasks_are_bounded_per_caller_and_in_all_and_a_finished_task_frees_its_place() {
    use mcp_runtime::{MAX_RUNNING_TASKS, MAX_RUNNING_TASKS_PER_OWNER};
    // Enough callers to fill the process: one more than the total holds.
    let callers = MAX_RUNNING_TASKS / MAX_RUNNING_TASKS_PER_OWNER + 1;
    let tokens: Vec<String> = (0..callers)
        .map(|i| format!("token{i}:caller{i}"))
        .collect();
    let tokens = tokens.join(",");
    let mut peer = Peer::open_with_env(
        env!("CARGO_BIN_EXE_catalogue").as_ref(),
        Transport::Http,
        MODERN,
        json!({"elicitation": {}, "extensions": {EXTENSION: {}}}),
        &[("HTTP_AUTH_TOKENS", &tokens)],
    );
    let mut first = None;
    for _ in 0..MAX_RUNNING_TASKS_PER_OWNER {
        let task = long_chore(&mut peer, 0);
        assert_eq!(task.result()["resultType"], "task", "{task:?}");
        first.get_or_insert_with(|| task.result()["taskId"].as_str().unwrap().to_owned());
    }
    let refused = long_chore(&mut peer, 0);
    assert_eq!(refused.error_code(), -32000, "{refused:?}");
    let message = refused.message["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!(
            "{MAX_RUNNING_TASKS_PER_OWNER} for this caller, {MAX_RUNNING_TASKS_PER_OWNER} at most"
        )),
        "{message}"
    );
    // Another caller is not held up by the first.
    for caller in 1..callers - 1 {
        for _ in 0..MAX_RUNNING_TASKS_PER_OWNER {
            let task = long_chore(&mut peer, caller);
            assert_eq!(
                task.result()["resultType"],
                "task",
                "caller {caller}: {task:?}"
            );
        }
    }
    // The process runs as many as it may: a caller with none is refused too.
    let last = callers - 1;
    let refused = long_chore(&mut peer, last);
    assert_eq!(refused.error_code(), -32000, "{refused:?}");
    let message = refused.message["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!(
            "0 for this caller, {MAX_RUNNING_TASKS_PER_OWNER} at most; {MAX_RUNNING_TASKS} in \
             all, {MAX_RUNNING_TASKS} at most"
        )),
        "{message}"
    );
    // A cancelled task gives its place back once its run has stopped.
    let first = first.unwrap();
    let ack = peer.call_with_headers(
        "tasks/cancel",
        json!({"taskId": first}),
        &[("Authorization", "Bearer token0")],
    );
    assert_eq!(ack.result(), &json!({"resultType": "complete"}));
    let deadline = Instant::now() + mcp_tests::TIMEOUT;
    loop {
        let reply = long_chore(&mut peer, last);
        if reply.message.get("error").is_none() {
            assert_eq!(reply.result()["resultType"], "task", "{reply:?}");
            break;
        }
        assert_eq!(reply.error_code(), -32000, "{reply:?}");
        assert!(
            Instant::now() < deadline,
            "the place never came back: {reply:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Opens a `subscriptions/listen` following `task_ids` over HTTP as the caller with
/// `token{caller}`, and returns its stream after the acknowledgement.
fn listen_to_tasks(
    peer: &mut Peer,
    caller: usize,
    task_ids: &[&str],
) -> mcp_tests::http::EventStream {
    let id = peer.take_id();
    let params = peer.params(json!({"notifications": {"taskIds": task_ids}}));
    let message =
        json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params});
    let auth = format!("Bearer token{caller}");
    let response = peer
        .http_post(&message)
        .header("Authorization", &auth)
        .send();
    assert_eq!(response.status, 200, "{response:?}");
    let mut events = response.events();
    let ack = mcp_tests::http::next_message(&mut events);
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    events
}

#[test]
fn a_listener_hears_only_the_tasks_of_its_own_caller() {
    let mut peer = Peer::open_with_env(
        env!("CARGO_BIN_EXE_catalogue").as_ref(),
        Transport::Http,
        MODERN,
        json!({"elicitation": {}, "extensions": {EXTENSION: {}}}),
        &[("HTTP_AUTH_TOKENS", "token0:caller0,token1:caller1")],
    );
    let task_of = |peer: &mut Peer, caller| {
        let task = long_chore(peer, caller);
        assert_eq!(task.result()["resultType"], "task", "{task:?}");
        task.result()["taskId"].as_str().unwrap().to_owned()
    };
    let (theirs, own) = (task_of(&mut peer, 0), task_of(&mut peer, 1));
    // Caller 1 has learnt caller 0's task id and follows it beside its own.
    let mut listening = listen_to_tasks(&mut peer, 1, &[&theirs, &own]);
    let mut owners = listen_to_tasks(&mut peer, 0, &[&theirs]);
    let cancel = |peer: &mut Peer, caller: usize, task: &str| {
        let auth = format!("Bearer token{caller}");
        let ack = peer.call_with_headers(
            "tasks/cancel",
            json!({"taskId": task}),
            &[("Authorization", &auth)],
        );
        assert_eq!(ack.result(), &json!({"resultType": "complete"}), "{ack:?}");
    };
    // Both change, the other caller's first: the listener's notifications keep that order,
    // so the first it hears would be the other caller's, were it sent.
    cancel(&mut peer, 0, &theirs);
    cancel(&mut peer, 1, &own);
    let heard = mcp_tests::http::next_message(&mut listening);
    assert_eq!(heard["method"], "notifications/tasks", "{heard}");
    assert_eq!(heard["params"]["taskId"], own.as_str(), "{heard}");
    assert_eq!(heard["params"]["status"], "cancelled", "{heard}");
    // The owner's listener hears it.
    let heard = mcp_tests::http::next_message(&mut owners);
    assert_eq!(heard["params"]["taskId"], theirs.as_str(), "{heard}");
    assert_eq!(heard["params"]["status"], "cancelled", "{heard}");
}
