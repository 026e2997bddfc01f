//! Replicas sharing Redis (feature `redis`), tested as deployments run them: a real
//! `redis-server`, several `catalogue --http` processes started with `MCP_REDIS_URL`, and
//! requests sent to one replica or another on purpose, as a load balancer may send them.
//! What one replica starts, another finishes: a session, a lost stream, a client's answer,
//! a notification, a task. And when Redis goes away, the replicas say so and recover.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use std::net::SocketAddr;

use mcp_tests::cluster::{Nginx, Redis, Replicas, SilencingProxy};
use mcp_tests::http::{EventStream, HttpServer, Next, Request, Response};
use mcp_tests::peer::MODERN;
use serde_json::{Value, json};

const LEGACY: &str = "2025-11-25";
const TASKS: &str = "io.modelcontextprotocol/tasks";

fn replicas(count: usize) -> Replicas {
    Replicas::start(env!("CARGO_BIN_EXE_catalogue").as_ref(), count)
}

/// Where requests go: one replica, or nginx in front of all of them.
trait Endpoint {
    fn addr(&self) -> SocketAddr;

    fn request(&self, method: &str, target: &str) -> Request {
        Request::new(self.addr(), method, target)
    }
}

impl Endpoint for HttpServer {
    fn addr(&self) -> SocketAddr {
        HttpServer::addr(self)
    }
}

impl Endpoint for Nginx {
    fn addr(&self) -> SocketAddr {
        Nginx::addr(self)
    }
}

fn post(server: &impl Endpoint, session: Option<&str>, message: &Value) -> Request {
    let mut request = server
        .request("POST", "/mcp")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", LEGACY);
    if let Some(session) = session {
        request = request.header("Mcp-Session-Id", session);
    }
    request.json(message)
}

/// Opens a handshake-era session on `server` and returns its id.
fn initialize(server: &impl Endpoint, capabilities: Value) -> String {
    let response = post(
        server,
        None,
        &json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": capabilities,
                "clientInfo": {"name": "cluster-e2e", "version": "1.0.0"},
            },
        }),
    )
    .send();
    if response.status != 200 {
        let status = response.status;
        panic!("initialize: {status} {}", response.text());
    }
    let session = response
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let initialized = post(
        server,
        Some(&session),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .send();
    assert_eq!(initialized.status, 202, "{initialized:?}");
    session
}

/// The response message of a request, from a JSON body or from the end of an SSE stream.
fn answer(response: Response) -> Value {
    if response.status != 200 {
        let status = response.status;
        panic!("HTTP {status}: {}", response.text());
    }
    if response.media_type() == Some("text/event-stream") {
        let mut events = response.events();
        while let Some(event) = events.next_event() {
            if event.data.as_deref().is_none_or(str::is_empty) {
                continue;
            }
            let message = event.json();
            if message.get("method").is_none() {
                return message;
            }
        }
        panic!("the stream ended without a response");
    }
    response.json()
}

fn call(server: &impl Endpoint, session: &str, id: i64, name: &str, arguments: Value) -> Value {
    call_method(
        server,
        session,
        id,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
}

fn call_method(
    server: &impl Endpoint,
    session: &str,
    id: i64,
    method: &str,
    params: Value,
) -> Value {
    answer(
        post(
            server,
            Some(session),
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        )
        .send(),
    )
}

/// Opens the standalone GET stream of a handshake-era session.
fn session_stream(server: &impl Endpoint, session: &str) -> EventStream {
    let stream = server
        .request("GET", "/mcp")
        .header("Accept", "text/event-stream")
        .header("MCP-Protocol-Version", LEGACY)
        .header("Mcp-Session-Id", session)
        .send();
    assert_eq!(stream.status, 200, "{stream:?}");
    stream.events()
}

/// A stateless (2026-07-28) request's parameters with its `_meta`.
fn modern_params(mut params: Value, capabilities: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "cluster-e2e", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    params
}

fn modern_post(server: &impl Endpoint, id: i64, method: &str, params: Value) -> Request {
    let mut request = server
        .request("POST", "/mcp")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", MODERN)
        .header("Mcp-Method", method);
    let name = match method {
        "tools/call" => params["name"].as_str(),
        "resources/read" => params["uri"].as_str(),
        "tasks/get" | "tasks/cancel" => params["taskId"].as_str(),
        _ => None,
    };
    if let Some(name) = name {
        request = request.header("Mcp-Name", name);
    }
    request.json(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
}

fn modern(server: &impl Endpoint, id: i64, method: &str, params: Value) -> Value {
    answer(modern_post(server, id, method, params).send())
}

/// The next message on a stream within `within`, skipping events without data.
fn next_message(events: &mut EventStream, within: Duration) -> Option<(Option<String>, Value)> {
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match events.next_within(left) {
            Next::Event(e) if e.data.as_deref().is_some_and(|d| !d.is_empty()) => {
                return Some((e.id.clone(), e.json()));
            }
            Next::Event(_) => {}
            Next::End | Next::TimedOut => return None,
        }
    }
}

/// `count` replicas of the catalogue whose copies of a session are not read again for a
/// minute: only the bus can tell a replica that a session changed or ended. `env` adds to
/// their environment.
fn replicas_told_only_by_the_bus(count: usize, env: &[(&str, &str)]) -> Replicas {
    let mut env = env.to_vec();
    env.push(("SESSION_RECHECK_MS", "60000"));
    Replicas::start_with(env!("CARGO_BIN_EXE_catalogue").as_ref(), count, &[], &env)
}

#[test]
fn a_session_opened_on_one_replica_is_served_by_the_others_until_deleted() {
    let cluster = replicas_told_only_by_the_bus(3, &[]);
    let session = initialize(cluster.replica(0), json!({}));
    for (id, i) in [(1, 1), (2, 2)] {
        let listed = answer(
            post(
                cluster.replica(i),
                Some(&session),
                &json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}),
            )
            .send(),
        );
        assert!(
            listed["result"]["tools"]
                .as_array()
                .is_some_and(|t| !t.is_empty()),
            "replica {i}: {listed}"
        );
    }
    // The log level set through one replica holds on the others.
    set_level(cluster.replica(1), &session, 3, "error");
    // Every replica applied the change before it was answered.
    assert_eq!(
        levels_logged(cluster.replica(2), &session, 4),
        [json!("error")],
        "only what the level lets through"
    );

    let deleted = cluster
        .replica(1)
        .request("DELETE", "/mcp")
        .header("Mcp-Session-Id", &session)
        .header("MCP-Protocol-Version", LEGACY)
        .send();
    assert_eq!(deleted.status, 200, "{deleted:?}");
    // Every replica applied the end before the DELETE was answered: with copies not read
    // again for a minute, only the bus could have told them.
    let ping = json!({"jsonrpc": "2.0", "id": 4, "method": "ping"});
    for i in 0..3 {
        let gone = post(cluster.replica(i), Some(&session), &ping).send();
        assert_eq!(gone.status, 404, "replica {i}: {gone:?}");
    }
}

/// A DELETE ends the session's calls on every replica, not only on the one it reached: a
/// tool must not run on, with its side effects, after its client ended the session.
#[test]
fn a_session_ended_on_one_replica_ends_its_calls_on_the_others() {
    let cluster = replicas_told_only_by_the_bus(2, &[]);
    let session = initialize(cluster.replica(0), json!({}));
    let response = post(
        cluster.replica(1),
        Some(&session),
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "progress_then_hold", "_meta": {"progressToken": "t"},
        }}),
    )
    .send();
    let mut events = response.events();
    let (_, first) = next_message(&mut events, mcp_tests::TIMEOUT).expect("progress");
    assert_eq!(first["method"], "notifications/progress", "{first}");

    let deleted = cluster
        .replica(0)
        .request("DELETE", "/mcp")
        .header("Mcp-Session-Id", &session)
        .header("MCP-Protocol-Version", LEGACY)
        .send();
    assert_eq!(deleted.status, 200, "{deleted:?}");
    // The call was cancelled on replica 1: its stream ends with no result.
    let deadline = Instant::now() + mcp_tests::TIMEOUT;
    loop {
        match events.next_within(deadline.saturating_duration_since(Instant::now())) {
            Next::Event(e) if e.data.as_deref().is_some_and(|d| !d.is_empty()) => {
                panic!("after the DELETE: {}", e.json())
            }
            Next::Event(_) => {}
            Next::End => break,
            Next::TimedOut => panic!("the call still runs on replica 1"),
        }
    }
    let other = initialize(cluster.replica(1), json!({}));
    let count = call(cluster.replica(1), &other, 2, "holds_cancelled", json!({}));
    assert_eq!(count["result"]["content"][0]["text"], "1", "{count}");
}

/// The Redis store writes a changed record back only over one that is still there: a
/// change written back as another replica ends the session must not bring it back.
#[test]
fn the_redis_store_replaces_only_a_record_that_is_there() {
    use mcp_runtime::cluster::{SessionRecord, SessionStore};
    let redis = Redis::start();
    let runtime = mcp_runtime::tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let cluster = mcp_runtime::redis::RedisCluster::connect(&redis.url())
            .await
            .unwrap();
        let store = cluster.session_store();
        let ttl = Duration::from_secs(60);
        let record = SessionRecord {
            id: "s".into(),
            protocol_version: LEGACY.into(),
            ..SessionRecord::default()
        };
        assert!(!store.replace(&record, ttl).await.unwrap(), "never opened");
        assert_eq!(store.get("s", ttl).await.unwrap(), None);
        store.put(&record, ttl).await.unwrap();
        let changed = SessionRecord {
            log_level: Some("error".into()),
            ..record.clone()
        };
        assert!(store.replace(&changed, ttl).await.unwrap());
        assert_eq!(store.get("s", ttl).await.unwrap(), Some(changed.clone()));
        assert!(store.remove("s").await.unwrap());
        assert!(!store.replace(&changed, ttl).await.unwrap(), "ended");
        assert_eq!(store.get("s", ttl).await.unwrap(), None);
    });
}

/// A client at its quota of sessions gives up its idlest one, on every replica: kept in
/// Redis, it would be read back at its next request and the quota would hold nothing back.
#[test]
fn a_session_given_up_for_the_quota_is_ended_on_every_replica() {
    let cluster = replicas_told_only_by_the_bus(2, &[("HTTP_MAX_SESSIONS_PER_CLIENT", "2")]);
    let ping = |i: usize, session: &str| {
        post(
            cluster.replica(i),
            Some(session),
            &json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        )
        .send()
        .status
    };
    let first = initialize(cluster.replica(0), json!({}));
    // Replica 1 holds a copy of it.
    assert_eq!(ping(1, &first), 200);
    let second = initialize(cluster.replica(0), json!({}));
    let third = initialize(cluster.replica(0), json!({}));
    for i in [0, 1] {
        assert_eq!(ping(i, &first), 404, "replica {i}");
    }
    for session in [&second, &third] {
        for i in [0, 1] {
            assert_eq!(ping(i, session), 200, "replica {i}");
        }
    }
}

/// A copy of an anonymous session counts against its client's requests in flight on the
/// replica that made it, as on the one that opened it.
#[test]
fn an_anonymous_clients_calls_are_counted_on_a_replica_serving_copies() {
    let cluster = replicas_told_only_by_the_bus(2, &[("HTTP_MAX_IN_FLIGHT_PER_CLIENT", "1")]);
    let one = initialize(cluster.replica(0), json!({}));
    let other = initialize(cluster.replica(0), json!({}));
    let held = post(
        cluster.replica(1),
        Some(&one),
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "progress_then_hold", "_meta": {"progressToken": "t"},
        }}),
    )
    .send();
    let mut events = held.events();
    let (_, first) = next_message(&mut events, mcp_tests::TIMEOUT).expect("progress");
    assert_eq!(first["method"], "notifications/progress", "{first}");
    let refused = post(
        cluster.replica(1),
        Some(&other),
        &json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
    )
    .send();
    assert_eq!(refused.status, 429, "{refused:?}");
    events.disconnect();
}

/// A session's change is answered only once every replica has applied it: while one of them
/// is stopped (SIGSTOP), the change waits for it, and once it runs again it serves the
/// change at once.
#[test]
fn a_session_change_is_answered_once_every_replica_has_applied_it() {
    // A publisher would wait a minute for replica 2, longer than the test waits for an
    // answer: only replica 2's having applied the change can end the wait in time.
    let cluster = replicas_told_only_by_the_bus(3, &[("BUS_APPLIED_WAIT_MS", "60000")]);
    let session = initialize(cluster.replica(0), json!({}));
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    // Replica 2 keeps a copy of the session.
    let pinged = post(cluster.replica(2), Some(&session), &ping).send();
    assert_eq!(pinged.status, 200, "{pinged:?}");

    let stopped = libc::pid_t::try_from(cluster.replica(2).pid()).expect("a process id");
    // SAFETY: kill sends a signal to the replica this test started, and nothing else.
    assert_eq!(
        unsafe { libc::kill(stopped, libc::SIGSTOP) },
        0,
        "stop replica 2"
    );
    let (answered, answer_of_set) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        let session = &session;
        let replica = cluster.replica(1);
        scope.spawn(move || {
            let set = post(
                replica,
                Some(session),
                &json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel",
                        "params": {"level": "error"}}),
            )
            .send();
            let _ = answered.send(set);
        });
        // Replica 2 cannot apply the change while it is stopped, so it is not answered.
        let early = answer_of_set.recv_timeout(Duration::from_millis(300));
        // SAFETY: as above.
        assert_eq!(
            unsafe { libc::kill(stopped, libc::SIGCONT) },
            0,
            "resume replica 2"
        );
        assert!(
            early.is_err(),
            "answered while replica 2 was stopped: {early:?}"
        );
        let set = answer(
            answer_of_set
                .recv_timeout(mcp_tests::TIMEOUT)
                .expect("answered once replica 2 runs again"),
        );
        assert_eq!(set["result"], json!({}), "{set}");
    });
    // Replica 2 logs at the new level at once.
    assert_eq!(
        levels_logged(cluster.replica(2), &session, 3),
        [json!("error")],
        "only what the level lets through"
    );
}

/// Someone watching the bus (a `redis-cli PSUBSCRIBE '*'`) is no replica: a change does not
/// wait for it to apply what it cannot. Waiting for it would take the bus's whole limit
/// (2 s) on every change; the fastest of three changes is timed against that.
#[test]
fn a_subscriber_that_is_no_replica_does_not_hold_changes_up() {
    let cluster = replicas_told_only_by_the_bus(2, &[]);
    let mut watcher =
        std::net::TcpStream::connect(("127.0.0.1", cluster.redis.port)).expect("reach Redis");
    watcher
        .write_all(b"PSUBSCRIBE *\r\n")
        .expect("subscribe to everything");
    watcher
        .set_read_timeout(Some(mcp_tests::TIMEOUT))
        .expect("read timeout");
    let mut confirmed = [0u8; 64];
    let n = watcher.read(&mut confirmed).expect("Redis confirms");
    assert!(
        String::from_utf8_lossy(&confirmed[..n]).contains("psubscribe"),
        "{:?}",
        String::from_utf8_lossy(&confirmed[..n])
    );

    let session = initialize(cluster.replica(0), json!({}));
    let fastest = ["error", "warning", "info"]
        .into_iter()
        .enumerate()
        .map(|(id, level)| {
            let started = Instant::now();
            set_level(cluster.replica(1), &session, id, level);
            started.elapsed()
        })
        .min()
        .expect("three changes");
    assert!(
        fastest < Duration::from_secs(2),
        "every change waited {fastest:?} or more: for the watcher too"
    );
    // The watcher saw them go by.
    let n = watcher.read(&mut confirmed).expect("the watcher reads");
    assert!(n > 0);
}

/// Once Redis restarts (empty), every replica subscribes again, and a session's change waits
/// for all of them once more: it is answered (not held up for the publisher's whole limit,
/// a minute here, by a replica whose answers the restart lost), and the replica that did
/// not serve it has it at once.
#[test]
fn after_redis_restarts_a_change_is_answered_once_every_replica_has_it_again() {
    let mut cluster = replicas_told_only_by_the_bus(3, &[("BUS_APPLIED_WAIT_MS", "60000")]);
    let port = cluster.redis.port;
    wait_for_replicas_on_the_bus(port, 3);
    // Before the restart a change waits for every replica: each has heard the others' hellos.
    let session = initialize(cluster.replica(0), json!({}));
    set_level(cluster.replica(1), &session, 1, "warning");

    cluster.redis.restart();
    wait_for_replicas_on_the_bus(port, 3);
    let session = initialize(cluster.replica(0), json!({}));
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    // Replica 2 keeps a copy of the new session, not read again for a minute.
    let pinged = post(cluster.replica(2), Some(&session), &ping).send();
    assert_eq!(pinged.status, 200, "{pinged:?}");
    let started = Instant::now();
    set_level(cluster.replica(1), &session, 3, "error");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the change waited {:?} for a replica that could not answer",
        started.elapsed()
    );
    assert_eq!(
        levels_logged(cluster.replica(2), &session, 4),
        [json!("error")],
        "replica 2 had not applied the change when it was answered"
    );
}

/// A replica whose subscription stops delivering while its connection stays open (left
/// half-open behind a NAT or a proxy that lost its state) no longer hears its own hellos;
/// within the time the others remember a replica plus one hello's interval (30 s + 10 s)
/// it subscribes again, reads again the sessions it may have missed changes of, tells its
/// listeners that what they follow may have changed, and hears the next change.
#[test]
fn a_replica_whose_subscription_falls_silent_subscribes_again() {
    let redis = Redis::start();
    let proxy = SilencingProxy::start(redis.port);
    let (direct_url, proxied_url) = (redis.url(), proxy.url());
    // Copies of a session not read again for ten minutes: within the test only the bus, or
    // the replica's knowing that it missed some of it, can bring a copy up to date.
    let replica = |url: &str| {
        HttpServer::spawn_with_args(
            env!("CARGO_BIN_EXE_catalogue").as_ref(),
            &[],
            &[
                ("MCP_REDIS_URL", url),
                ("MCP_STATE_KEY", "a key every replica of the test shares"),
                ("SESSION_RECHECK_MS", "600000"),
                ("BUS_APPLIED_WAIT_MS", "1000"),
            ],
        )
    };
    let direct = replica(&direct_url);
    let proxied = replica(&proxied_url);
    proxy.wait_for_subscriptions(1, mcp_tests::TIMEOUT);
    wait_for_replicas_on_the_bus(redis.port, 2);
    let session = initialize(&direct, json!({}));
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    // The replica behind the proxy keeps a copy of the session.
    let pinged = post(&proxied, Some(&session), &ping).send();
    assert_eq!(pinged.status, 200, "{pinged:?}");
    // A task runs on the other replica.
    let tasks = json!({"extensions": {TASKS: {}}});
    let created = modern(
        &direct,
        1,
        "tools/call",
        modern_params(json!({"name": "hold"}), tasks.clone()),
    );
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task_id = created["result"]["taskId"].as_str().unwrap().to_owned();
    // And a listener there follows a resource, the tools list and the task.
    let listen = modern_post(
        &proxied,
        1,
        "subscriptions/listen",
        modern_params(
            json!({"notifications": {"resourceSubscriptions": ["test://watched"],
                                     "toolsListChanged": true, "taskIds": [&task_id]}}),
            tasks.clone(),
        ),
    )
    .send();
    assert_eq!(listen.status, 200, "{listen:?}");
    let mut listening = listen.events();
    let (_, ack) = next_message(&mut listening, mcp_tests::TIMEOUT).expect("an ack");
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );

    assert_eq!(
        proxy.silence_subscriptions(),
        1,
        "one subscription to silence"
    );
    let silenced = Instant::now();
    set_level(&direct, &session, 2, "error");
    // The change did not reach the silenced replica: its copy still lets `info` through.
    assert_eq!(
        levels_logged(&proxied, &session, 3),
        [json!("info"), json!("error")],
        "the silenced replica applied a change it cannot have heard of"
    );
    // The resource changes while the replica hears nothing: only its knowing that it may
    // have missed something can tell its listener.
    let touched = call(&direct, &session, 100, "touch_watched", json!({}));
    assert_eq!(touched["result"]["content"][0]["text"], "touched");
    // So does the task: the store has its new state, the silenced replica was not told.
    let cancelled = modern(
        &direct,
        2,
        "tasks/cancel",
        modern_params(json!({"taskId": task_id}), tasks),
    );
    assert!(cancelled.get("result").is_some(), "{cancelled}");

    proxy.wait_for_subscriptions(2, Duration::from_secs(60));
    // Its last hello heard came at most one interval (10 s) before the silence, and it
    // subscribes again once 30 s have passed since: 20 s at the soonest, less the time the
    // last hello took to come back, hence a second's slack.
    let noticed = silenced.elapsed();
    assert!(
        noticed >= Duration::from_secs(19),
        "subscribed again after {noticed:?}, before its own hellos could have been missed"
    );
    // Subscribed again, it tells its listener that what it follows may have changed.
    let mut told = Vec::new();
    while told.len() < 3 {
        let (_, heard) = next_message(&mut listening, mcp_tests::TIMEOUT).unwrap_or_else(|| {
            panic!("the listener was not told what may have changed, only {told:?}")
        });
        // The task's creation, heard on the bus before the silence (after the listener
        // opened, or not), is not what the gap is about.
        if heard["method"] == "notifications/tasks" && heard["params"]["status"] == "working" {
            continue;
        }
        told.push(heard);
    }
    told.sort_by_key(|m| m["method"].to_string());
    assert_eq!(
        [
            &told[0]["method"],
            &told[1]["method"],
            &told[2]["method"],
            &told[0]["params"]["uri"],
            &told[1]["params"]["taskId"],
            &told[1]["params"]["status"],
        ],
        [
            "notifications/resources/updated",
            "notifications/tasks",
            "notifications/tools/list_changed",
            "test://watched",
            task_id.as_str(),
            "cancelled",
        ],
        "{told:?}"
    );
    // Subscribed again, it reads the session again: the change it missed is in force.
    let mut id = 4;
    let mut logged_until = |levels: &[Value], why: &str| {
        let deadline = Instant::now() + mcp_tests::TIMEOUT;
        loop {
            let logged = levels_logged(&proxied, &session, id);
            id += 1;
            if logged == levels {
                return;
            }
            assert!(Instant::now() < deadline, "{why}: {logged:?}");
        }
    };
    logged_until(
        &[json!("error")],
        "the replica that subscribed again kept its stale copy",
    );
    // Once more, so that the copy served next is one read after the resubscription (a read
    // under way when it came is not taken as current, and the request after it reads again).
    logged_until(&[json!("error")], "the copy went stale again");
    // And it hears the next change, which only the bus can bring it now.
    set_level(&direct, &session, 0, "info");
    logged_until(
        &[json!("info"), json!("error")],
        "the replica that subscribed again did not apply the next change",
    );
}

/// Waits until `count` replicas are subscribed to the bus of the Redis on `port` (the
/// channel of hellos, which each replica subscribes to in the same command as the bus's).
fn wait_for_replicas_on_the_bus(port: u16, count: usize) {
    let redis = redis::Client::open(format!("redis://127.0.0.1:{port}/")).expect("a Redis URL");
    // None while Redis is (re)starting.
    let on_the_bus = || -> Option<usize> {
        let mut connection = redis.get_connection_with_timeout(mcp_tests::TIMEOUT).ok()?;
        connection.set_read_timeout(Some(mcp_tests::TIMEOUT)).ok()?;
        let hello: Vec<String> = redis::cmd("PUBSUB")
            .arg("CHANNELS")
            .arg("*:hello")
            .query(&mut connection)
            .ok()?;
        let (_, subscribers): (String, usize) = redis::cmd("PUBSUB")
            .arg("NUMSUB")
            .arg(hello.first()?)
            .query(&mut connection)
            .ok()?;
        Some(subscribers)
    };
    let deadline = Instant::now() + mcp_tests::TIMEOUT;
    loop {
        let on_the_bus = on_the_bus().unwrap_or(0);
        if on_the_bus == count {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{on_the_bus} of {count} replicas on the bus"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sets the log level of `session` through `server`, which answers once every replica has
/// applied it.
fn set_level(server: &impl Endpoint, session: &str, id: impl Into<Value>, level: &str) {
    let set = answer(
        post(
            server,
            Some(session),
            &json!({"jsonrpc": "2.0", "id": id.into(), "method": "logging/setLevel",
                    "params": {"level": level}}),
        )
        .send(),
    );
    assert_eq!(set["result"], json!({}), "{set}");
}

/// The levels of the messages the `log` tool sends (one `info`, one `error`) that reach the
/// client of `session` through `server`.
fn levels_logged(server: &impl Endpoint, session: &str, id: i64) -> Vec<Value> {
    let logged = post(
        server,
        Some(session),
        &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "log"}}),
    )
    .send();
    let mut events = logged.events();
    let mut levels = Vec::new();
    while let Some((_, message)) = next_message(&mut events, mcp_tests::TIMEOUT) {
        if message["method"] == "notifications/message" {
            levels.push(message["params"]["level"].clone());
        }
        if message.get("method").is_none() {
            break;
        }
    }
    levels
}

/// What a client read of one stream, over however many connections.
#[derive(Default, Debug)]
struct Received {
    messages: Vec<Value>,
    last_id: Option<String>,
}

impl Received {
    /// Reads up to `how_many` messages; true when the stream's response came (or it ended).
    fn take(&mut self, events: &mut EventStream, how_many: usize) -> bool {
        for _ in 0..how_many {
            let Some((id, message)) = next_message(events, mcp_tests::TIMEOUT) else {
                return true;
            };
            if id.is_some() {
                self.last_id = id;
            }
            let end = message.get("method").is_none();
            self.messages.push(message);
            if end {
                return true;
            }
        }
        false
    }
}

#[test]
fn a_stream_whose_replica_dies_resumes_on_another_with_every_event_once() {
    let mut cluster = replicas(3);
    let session = initialize(cluster.replica(0), json!({}));
    const COUNT: u64 = 24;
    // The call runs on replica 0, which writes its events to Redis as they happen.
    let response = post(
        cluster.replica(0),
        Some(&session),
        &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "ticks", "arguments": {"count": COUNT, "every_ms": 60},
            "_meta": {"progressToken": "ticks"},
        }}),
    )
    .send();
    assert_eq!(response.media_type(), Some("text/event-stream"));
    let mut seen = Received::default();
    let mut events = response.events();
    assert!(!seen.take(&mut events, 4), "ended early: {seen:?}");
    events.disconnect();
    let resume_from = |last: &Option<String>, server: &HttpServer| {
        server
            .request("GET", "/mcp")
            .header("Accept", "text/event-stream")
            .header("MCP-Protocol-Version", LEGACY)
            .header("Mcp-Session-Id", &session)
            .header("Last-Event-ID", last.as_deref().expect("an event id"))
            .send()
    };

    // Resumed on replica 1, which follows the stream in Redis; then replica 1 dies.
    let resumed = resume_from(&seen.last_id, cluster.replica(1));
    assert_eq!(resumed.status, 200, "{resumed:?}");
    let mut events = resumed.events();
    assert!(!seen.take(&mut events, 6), "ended early: {seen:?}");
    cluster.kill(1);
    // Whatever replica 1 had sent and the client had not read is gone with the connection.
    drop(events);

    // Resumed again on replica 2, to the end.
    let resumed = resume_from(&seen.last_id, cluster.replica(2));
    assert_eq!(resumed.status, 200, "{resumed:?}");
    let mut events = resumed.events();
    assert!(seen.take(&mut events, 1000), "no end: {seen:?}");

    let progress: Vec<u64> = seen
        .messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"]["progress"].as_f64().expect("a progress number") as u64)
        .collect();
    assert_eq!(
        progress,
        (1..=COUNT).collect::<Vec<_>>(),
        "every event once, in order"
    );
    let last = seen.messages.last().expect("messages");
    assert_eq!(last["id"], 7, "{last}");
    assert_eq!(
        last["result"]["content"][0]["text"],
        format!("ticked {COUNT} times")
    );
}

#[test]
fn a_stream_with_no_events_yet_resumes_from_its_start_on_another_replica() {
    let cluster = replicas(2);
    let session = initialize(cluster.replica(0), json!({}));
    let subscribed = call_method(
        cluster.replica(0),
        &session,
        1,
        "resources/subscribe",
        json!({"uri": "test://watched"}),
    );
    assert!(subscribed.get("result").is_some(), "{subscribed}");
    let get = |server: &HttpServer, last: Option<&str>| {
        let mut request = server
            .request("GET", "/mcp")
            .header("Accept", "text/event-stream")
            .header("MCP-Protocol-Version", LEGACY)
            .header("Mcp-Session-Id", &session);
        if let Some(last) = last {
            request = request.header("Last-Event-ID", last);
        }
        request.send()
    };
    // The standalone stream, opened on replica 0: its priming event is all the client
    // reads before the connection drops.
    let opened = get(cluster.replica(0), None);
    assert_eq!(opened.status, 200, "{opened:?}");
    let mut events = opened.events();
    let priming = events.expect_event();
    let id = priming.id.expect("the priming event's id");
    assert!(id.ends_with(":0"), "{id}");
    events.disconnect();

    // Replica 1 knows the stream from its opening, not from a first event.
    let resumed = get(cluster.replica(1), Some(&id));
    assert_eq!(resumed.status, 200, "{resumed:?}");
    let mut resumed = resumed.events();
    let other = initialize(cluster.replica(0), json!({}));
    let touched = call(cluster.replica(0), &other, 2, "touch_watched", json!({}));
    assert_eq!(touched["result"]["content"][0]["text"], "touched");
    let (_, heard) = next_message(&mut resumed, mcp_tests::TIMEOUT)
        .expect("the resumed stream hears the session's notification");
    assert_eq!(
        heard["method"], "notifications/resources/updated",
        "{heard}"
    );
}

#[test]
fn an_answer_posted_to_another_replica_reaches_the_call_waiting_for_it() {
    let cluster = replicas(2);
    let session = initialize(cluster.replica(0), json!({"elicitation": {}}));
    let response = post(
        cluster.replica(0),
        Some(&session),
        &json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                "params": {"name": "choose_seat"}}),
    )
    .send();
    let mut events = response.events();
    let (_, request) = next_message(&mut events, mcp_tests::TIMEOUT).expect("a request");
    assert_eq!(request["method"], "elicitation/create", "{request}");
    // The client's answer goes to the other replica, as a load balancer may send it.
    let answered = post(
        cluster.replica(1),
        Some(&session),
        &json!({"jsonrpc": "2.0", "id": request["id"], "result": {
            "action": "accept", "content": {"name": "Ada", "seat": "aisle", "bags": 2},
        }}),
    )
    .send();
    assert_eq!(answered.status, 202, "{answered:?}");
    let (_, result) = next_message(&mut events, mcp_tests::TIMEOUT).expect("the result");
    assert_eq!(result["id"], 5, "{result}");
    assert_eq!(
        result["result"]["content"][0]["text"],
        "Ada sits by the aisle with 2 bag(s)"
    );
}

#[test]
fn through_nginx_any_replica_serves_a_session_and_streams_are_not_buffered() {
    let cluster = replicas(3);
    let nginx = Nginx::start(&cluster.addrs());
    let session = initialize(&nginx, json!({"elicitation": {}}));
    // Round-robin: these land on every replica.
    for id in 1..=6 {
        let pinged = answer(
            post(
                &nginx,
                Some(&session),
                &json!({"jsonrpc": "2.0", "id": id, "method": "ping"}),
            )
            .send(),
        );
        assert_eq!(pinged["result"], json!({}), "{pinged}");
    }
    // Events pass through as they happen: a progress report reaches the client while the
    // call that sent it still runs (it holds until cancelled, so a buffered stream would
    // deliver nothing).
    let response = post(
        &nginx,
        Some(&session),
        &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "progress_then_hold", "_meta": {"progressToken": "t"},
        }}),
    )
    .send();
    let mut events = response.events();
    let (_, first) = next_message(&mut events, mcp_tests::TIMEOUT).expect("progress");
    assert_eq!(first["method"], "notifications/progress", "{first}");
    assert_eq!(first["params"]["progressToken"], "t", "{first}");
    let cancelled = post(
        &nginx,
        Some(&session),
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 7}}),
    )
    .send();
    assert_eq!(cancelled.status, 202, "{cancelled:?}");
    events.disconnect();
    // An elicitation answered through nginx, wherever its answer lands.
    for id in 8..=10 {
        let response = post(
            &nginx,
            Some(&session),
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": "choose_seat"}}),
        )
        .send();
        let mut events = response.events();
        let (_, request) = next_message(&mut events, mcp_tests::TIMEOUT).expect("asked");
        let answered = post(
            &nginx,
            Some(&session),
            &json!({"jsonrpc": "2.0", "id": request["id"], "result": {
                "action": "accept", "content": {"name": "Lin", "seat": "window"},
            }}),
        )
        .send();
        assert_eq!(answered.status, 202, "{answered:?}");
        let (_, result) = next_message(&mut events, mcp_tests::TIMEOUT).expect("result");
        assert_eq!(
            result["result"]["content"][0]["text"],
            "Lin sits by the window with 1 bag(s)"
        );
    }
}

#[test]
fn a_request_state_sealed_on_one_replica_opens_on_another_with_the_same_key_only() {
    let cluster = replicas(2);
    let capabilities = json!({"elicitation": {}});
    let asked = modern(
        cluster.replica(0),
        1,
        "tools/call",
        modern_params(json!({"name": "choose_seat"}), capabilities.clone()),
    );
    let result = &asked["result"];
    assert_eq!(result["resultType"], "input_required", "{asked}");
    let key = result["inputRequests"]
        .as_object()
        .and_then(|r| r.keys().next())
        .expect("an input request")
        .clone();
    let retry = modern_params(
        json!({
            "name": "choose_seat",
            "inputResponses": {&key: {"action": "accept", "content": {"name": "Ada", "seat": "window"}}},
            "requestState": result["requestState"],
        }),
        capabilities,
    );
    let done = modern(cluster.replica(1), 2, "tools/call", retry.clone());
    assert_eq!(
        done["result"]["content"][0]["text"], "Ada sits by the window with 1 bag(s)",
        "{done}"
    );

    // A replica with a key of its own cannot open the state: it refuses, naming why.
    let stranger = HttpServer::spawn(
        env!("CARGO_BIN_EXE_catalogue").as_ref(),
        &[(
            "MCP_STATE_KEY",
            "a different key, as long as the shared one",
        )],
    );
    let refused = modern(&stranger, 3, "tools/call", retry);
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("requestState")),
        "{refused}"
    );
}

#[test]
fn a_change_on_one_replica_reaches_listeners_on_the_others() {
    let cluster = replicas(3);
    // A stateless listener on replica 2.
    let response = modern_post(
        cluster.replica(2),
        1,
        "subscriptions/listen",
        modern_params(
            json!({"notifications": {"resourceSubscriptions": ["test://watched"], "toolsListChanged": true}}),
            json!({}),
        ),
    )
    .send();
    assert_eq!(response.status, 200, "{response:?}");
    let mut listening = response.events();
    let (_, ack) = next_message(&mut listening, mcp_tests::TIMEOUT).expect("an ack");
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );

    // A handshake-era session opened on replica 1, subscribed there, its stream open on 2.
    let session = initialize(cluster.replica(1), json!({}));
    let subscribed = answer(
        post(
            cluster.replica(1),
            Some(&session),
            &json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
                    "params": {"uri": "test://watched"}}),
        )
        .send(),
    );
    assert!(subscribed.get("result").is_some(), "{subscribed}");
    let mut stream = session_stream(cluster.replica(2), &session);

    // The change happens on replica 0.
    let other = initialize(cluster.replica(0), json!({}));
    let touched = call(cluster.replica(0), &other, 3, "touch_watched", json!({}));
    assert_eq!(touched["result"]["content"][0]["text"], "touched");

    let (_, heard) = next_message(&mut listening, mcp_tests::TIMEOUT)
        .expect("the listener on replica 2 hears replica 0's change");
    assert_eq!(
        heard["method"], "notifications/resources/updated",
        "{heard}"
    );
    assert_eq!(heard["params"]["uri"], "test://watched");
    assert_eq!(
        heard["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        1
    );
    let (_, heard) = next_message(&mut stream, mcp_tests::TIMEOUT)
        .expect("the session's stream on replica 2 hears replica 0's change");
    assert_eq!(
        heard["method"], "notifications/resources/updated",
        "{heard}"
    );

    // A list change on replica 0 reaches the listener too.
    let toggled = call(
        cluster.replica(0),
        &other,
        4,
        "toggle_tool",
        json!({"name": "fast", "enabled": false}),
    );
    assert_eq!(toggled["result"]["content"][0]["text"], "changed: true");
    let (_, heard) = next_message(&mut listening, mcp_tests::TIMEOUT).expect("list change");
    assert_eq!(
        heard["method"], "notifications/tools/list_changed",
        "{heard}"
    );
}

/// A list change is announced once until the client fetches that list, wherever it fetches
/// it: a `tools/list` served by a replica other than the session's own makes the next change
/// news again on the session's stream.
#[test]
fn a_list_fetched_through_another_replica_makes_the_next_change_news_again() {
    let cluster = replicas(2);
    let session = initialize(cluster.replica(0), json!({}));
    let mut stream = session_stream(cluster.replica(1), &session);
    for (id, enabled) in [(1, false), (3, true), (5, false)] {
        let toggled = call(
            cluster.replica(1),
            &session,
            id,
            "toggle_tool",
            json!({"name": "fast", "enabled": enabled}),
        );
        assert_eq!(toggled["result"]["content"][0]["text"], "changed: true");
        let (_, heard) = next_message(&mut stream, mcp_tests::TIMEOUT)
            .unwrap_or_else(|| panic!("change {id} was not announced"));
        assert_eq!(
            heard["method"], "notifications/tools/list_changed",
            "{heard}"
        );
        // Fetched through the replica the session was not opened on.
        let listed = call_method(
            cluster.replica(1),
            &session,
            id + 1,
            "tools/list",
            json!({}),
        );
        assert!(listed["result"]["tools"].is_array(), "{listed}");
    }
}

#[test]
fn a_task_started_on_one_replica_is_reported_and_cancelled_by_the_others() {
    let cluster = replicas(3);
    let capabilities = json!({"extensions": {TASKS: {}}});
    let cancelled_before = holds_cancelled(cluster.replica(0));
    let created = modern(
        cluster.replica(0),
        1,
        "tools/call",
        modern_params(json!({"name": "hold"}), capabilities.clone()),
    );
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task_id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let got = modern(
        cluster.replica(1),
        2,
        "tasks/get",
        modern_params(json!({"taskId": task_id}), capabilities.clone()),
    );
    assert_eq!(got["result"]["status"], "working", "{got}");
    let cancelled = modern(
        cluster.replica(2),
        3,
        "tasks/cancel",
        modern_params(json!({"taskId": task_id}), capabilities.clone()),
    );
    assert!(cancelled.get("result").is_some(), "{cancelled}");
    let got = modern(
        cluster.replica(0),
        4,
        "tasks/get",
        modern_params(json!({"taskId": task_id}), capabilities),
    );
    assert_eq!(got["result"]["status"], "cancelled", "{got}");
    // The handler, on replica 0, is stopped.
    let deadline = Instant::now() + mcp_tests::TIMEOUT;
    while holds_cancelled(cluster.replica(0)) != cancelled_before + 1 {
        assert!(
            Instant::now() < deadline,
            "the handler on replica 0 still runs"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn holds_cancelled(server: &HttpServer) -> u64 {
    let counted = modern(
        server,
        9,
        "tools/call",
        modern_params(json!({"name": "holds_cancelled"}), json!({})),
    );
    counted["result"]["content"][0]["text"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("a count: {counted}"))
}

#[test]
fn while_redis_is_down_requests_that_need_it_fail_clearly_and_service_recovers() {
    let mut cluster = replicas(2);
    let session = initialize(cluster.replica(0), json!({}));
    cluster.redis.stop();

    // A session's request: 503, and a JSON-RPC error that says what is wrong.
    let refused = post(
        cluster.replica(1),
        Some(&session),
        &json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
    )
    .send();
    assert_eq!(refused.status, 503, "{refused:?}");
    let body = refused.json();
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("Redis")),
        "{body}"
    );
    let refused = post(
        cluster.replica(1),
        None,
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": LEGACY, "capabilities": {},
            "clientInfo": {"name": "cluster-e2e", "version": "1.0.0"}}}),
    )
    .send();
    assert_eq!(refused.status, 503, "{refused:?}");
    // A stateless request needs nothing of Redis and is served.
    let served = modern(
        cluster.replica(0),
        2,
        "tools/call",
        modern_params(json!({"name": "fast"}), json!({})),
    );
    assert_eq!(served["result"]["content"][0]["text"], "fast", "{served}");

    // Redis is back, empty: the old session is unknown (a client opens a new one), and new
    // sessions and the bus work again, without restarting a replica.
    cluster.redis.restart();
    let deadline = Instant::now() + mcp_tests::TIMEOUT;
    let gone = loop {
        let response = post(
            cluster.replica(1),
            Some(&session),
            &json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
        )
        .send();
        if response.status != 503 || Instant::now() > deadline {
            break response;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(gone.status, 404, "{gone:?}");
    let session = initialize(cluster.replica(1), json!({}));
    let pinged = answer(
        post(
            cluster.replica(0),
            Some(&session),
            &json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}),
        )
        .send(),
    );
    assert_eq!(pinged["result"], json!({}), "{pinged}");

    let deadline = Instant::now() + 3 * mcp_tests::TIMEOUT;
    loop {
        let response = modern_post(
            cluster.replica(1),
            5,
            "subscriptions/listen",
            modern_params(
                json!({"notifications": {"resourceSubscriptions": ["test://watched"]}}),
                json!({}),
            ),
        )
        .send();
        let mut listening = response.events();
        next_message(&mut listening, mcp_tests::TIMEOUT).expect("an ack");
        call(cluster.replica(0), &session, 6, "touch_watched", json!({}));
        if let Some((_, heard)) = next_message(&mut listening, Duration::from_secs(3)) {
            assert_eq!(
                heard["method"], "notifications/resources/updated",
                "{heard}"
            );
            break;
        }
        // The bus resubscribes on its own a moment after Redis is back.
        assert!(Instant::now() < deadline, "the bus did not recover");
    }
}

#[test]
#[cfg(target_os = "linux")]
fn stopping_nginx_ends_its_workers_with_it() {
    use mcp_tests::group::{children_of, is_alive};
    let cluster = replicas(1);
    let nginx = Nginx::start(&cluster.addrs());
    let master = nginx.pid();
    // The master starts its worker once it listens; wait for it rather than guess.
    let deadline = Instant::now() + mcp_tests::TIMEOUT;
    let workers = loop {
        let workers = children_of(master);
        if !workers.is_empty() {
            break workers;
        }
        assert!(Instant::now() < deadline, "nginx started no worker");
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(nginx);
    assert!(!is_alive(master), "the master is gone");
    let left: Vec<u32> = workers.into_iter().filter(|&w| is_alive(w)).collect();
    assert!(
        left.is_empty(),
        "nginx workers outlived their master: {left:?}"
    );
}

// ---------------------------------------------------------------------------------------
// examples/notes as three replicas behind nginx: pins kept in the session travel with it

/// A tool call to the notes server, as the caller of `token`, in `session`.
fn notes_call(
    server: &impl Endpoint,
    token: &str,
    session: Option<&str>,
    id: i64,
    name: &str,
    arguments: Value,
) -> Value {
    let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                         "params": {"name": name, "arguments": arguments}});
    answer(
        post(server, session, &message)
            .header("Authorization", &format!("Bearer {token}"))
            .send(),
    )
}

/// Opens a notes session as the caller of `token`.
fn notes_session(server: &impl Endpoint, token: &str) -> String {
    let response = post(
        server,
        None,
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": LEGACY, "capabilities": {},
            "clientInfo": {"name": "cluster-e2e", "version": "1.0.0"}}}),
    )
    .header("Authorization", &format!("Bearer {token}"))
    .send();
    let session = response
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    answer(response);
    session
}

/// What `pinned` answers on `server` for the session.
fn pins(server: &impl Endpoint, session: &str, id: i64) -> Vec<String> {
    pinned_titles(&notes_call(
        server,
        "token-a",
        Some(session),
        id,
        "pinned",
        json!({}),
    ))
}

fn pinned_titles(response: &Value) -> Vec<String> {
    response["result"]["structuredContent"]["result"]
        .as_array()
        .unwrap_or_else(|| panic!("a list: {response}"))
        .iter()
        .map(|n| n["title"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn notes_pins_survive_requests_landing_on_other_replicas() {
    let scratch = mcp_tests::Scratch::new("notes-cluster");
    let db = scratch.path("notes.db");
    let cluster = Replicas::start_with(
        &mcp_tests::workspace_binary("notes"),
        3,
        &[std::ffi::OsStr::new("--db"), db.as_os_str()],
        &[("NOTES_TOKENS", "alice:token-a,bob:token-b")],
    );
    let nginx = Nginx::start(&cluster.addrs());
    let session = notes_session(&nginx, "token-a");
    let (first, second, third) = (cluster.replica(0), cluster.replica(1), cluster.replica(2));
    let added = notes_call(
        first,
        "token-a",
        Some(&session),
        1,
        "add_note",
        json!({"title": "shared", "body": "b"}),
    );
    let id = added["result"]["structuredContent"]["id"].as_i64().unwrap();
    let pinned = notes_call(
        second,
        "token-a",
        Some(&session),
        2,
        "pin",
        json!({"id": id}),
    );
    assert_eq!(pinned["result"]["isError"], Value::Null, "{pinned}");
    // Every replica applied the pin before it was answered: the third sees it at once.
    assert_eq!(pins(third, &session, 3), ["shared"]);
    // Round-robin through nginx: every replica answers the same.
    for id in 4..=9 {
        assert_eq!(pins(&nginx, &session, id), ["shared"]);
    }
    // A pin added on one replica joins the others' view at once.
    let other = notes_call(
        first,
        "token-a",
        Some(&session),
        10,
        "add_note",
        json!({"title": "second", "body": "b"}),
    );
    let other = other["result"]["structuredContent"]["id"].as_i64().unwrap();
    notes_call(
        third,
        "token-a",
        Some(&session),
        11,
        "pin",
        json!({"id": other}),
    );
    assert_eq!(pins(second, &session, 12), ["shared", "second"]);

    // Another session of the same user has pins of its own, on every replica.
    let fresh = notes_session(&nginx, "token-a");
    for (id, replica) in [first, second, third].into_iter().enumerate() {
        let seen = notes_call(
            replica,
            "token-a",
            Some(&fresh),
            20 + id as i64,
            "pinned",
            json!({}),
        );
        assert_eq!(pinned_titles(&seen), Vec::<String>::new());
    }
    // Bob's session on any replica: Alice's note is not found.
    let bob = notes_session(&nginx, "token-b");
    let refused = notes_call(
        &nginx,
        "token-b",
        Some(&bob),
        30,
        "get_note",
        json!({"id": id}),
    );
    assert_eq!(
        refused["result"]["content"][0]["text"],
        format!("note {id} not found")
    );
}
