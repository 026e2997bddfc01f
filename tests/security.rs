//! The attacks of the security review, replayed against real server processes over loopback:
//! each test is one probe, and says what the server must do instead of what it once did.
//! The security chapter of the book lists them with their defences.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mcp_runtime::http::HttpOptions;
use mcp_tests::http::{EventStream, HttpServer, Next, Request, Response, Session, next_message};
use mcp_tests::{Scratch, StdioServer, TIMEOUT};
use serde_json::{Value, json};

const LATEST: &str = "2025-11-25";

fn catalogue(env: &[(&str, &str)]) -> HttpServer {
    HttpServer::spawn(catalogue_path(), env)
}

/// The catalogue server of this build, or the one `MCP_PROBE_CATALOGUE` names: the probes
/// can be run against another build (an older one, to see them fail there).
fn catalogue_path() -> &'static Path {
    static PATH: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        std::env::var_os("MCP_PROBE_CATALOGUE").map_or_else(
            || PathBuf::from(env!("CARGO_BIN_EXE_catalogue")),
            PathBuf::from,
        )
    })
}

fn post(server: &HttpServer, target: &str, message: &Value) -> Request {
    server
        .request("POST", target)
        .header("Accept", "application/json, text/event-stream")
        .json(message)
}

fn initialize() -> Value {
    json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": LATEST,
            "capabilities": {},
            "clientInfo": {"name": "security-probe", "version": "1.0.0"},
        },
    })
}

fn call(id: i64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
}

fn bearer(request: Request, token: Option<&str>) -> Request {
    match token {
        Some(token) => request.header("Authorization", &format!("Bearer {token}")),
        None => request,
    }
}

fn json_of(response: Response) -> Value {
    assert_eq!(response.status, 200, "{response:?}");
    response.json()
}

fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content: {response}"))
}

/// Asserts a status whose body is a JSON-RPC error, and returns the error's message.
fn refused(response: Response, status: u16) -> String {
    assert_eq!(response.status, status, "{response:?}");
    assert_eq!(
        response.media_type(),
        Some("application/json"),
        "{response:?}"
    );
    let body = response.json();
    body["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("not a JSON-RPC error: {body}"))
        .to_owned()
}

/// A session at the latest handshake revision, as the caller of `token`.
fn session<'a>(server: &'a HttpServer, token: Option<&str>) -> Session<'a> {
    Session::open_with(server, LATEST, json!({}), token)
}

/// A raw connection, for probes no well-behaved client would make.
fn connect(addr: SocketAddr) -> TcpStream {
    let tcp = TcpStream::connect_timeout(&addr, TIMEOUT).expect("connect");
    tcp.set_nodelay(true).expect("TCP_NODELAY");
    tcp
}

/// Reads until the server closes the connection (or `within` passes, which fails the
/// test); returns what was read.
fn read_until_closed(tcp: &mut TcpStream, within: Duration) -> Vec<u8> {
    let deadline = Instant::now() + within;
    let mut bytes = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(
            !left.is_zero(),
            "the server kept the connection open for {within:?}"
        );
        tcp.set_read_timeout(Some(left)).expect("read timeout");
        match tcp.read(&mut buffer) {
            Ok(0) => return bytes,
            Ok(n) => bytes.extend_from_slice(&buffer[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return bytes,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => panic!("read: {e}"),
        }
    }
}

/// Requires `answer` (a raw HTTP response) to have `status`, showing it whole otherwise.
#[track_caller]
fn assert_status(answer: &[u8], status: u16) {
    assert_eq!(
        status_of(answer),
        Some(status),
        "{}",
        String::from_utf8_lossy(answer)
    );
}

fn status_of(raw: &[u8]) -> Option<u16> {
    let text = String::from_utf8_lossy(raw);
    text.strip_prefix("HTTP/1.1 ")?.get(..3)?.parse().ok()
}

// ---------------------------------------------------------------------------------------
// 1. Every route behind the same checks

const TOKEN: &str = "the-right-token-for-the-tester";

#[test]
fn every_route_refuses_a_request_without_a_token() {
    let server = catalogue(&[("HTTP_AUTH_TOKEN", TOKEN)]);
    // The routes of the very build the server is: same crate, same features.
    let routes = HttpOptions::default().routes();
    assert!(
        routes.iter().any(|r| r.path == "/sse") && routes.iter().any(|r| r.path == "/messages"),
        "the legacy routes are in the table: {routes:?}"
    );
    for route in &routes {
        for method in &route.methods {
            let mut request = server
                .request(method.as_str(), &format!("{}?sessionId=0", route.path))
                .header("Accept", "application/json, text/event-stream");
            if !route.public {
                request = request
                    .header("Content-Type", "application/json")
                    .body(initialize().to_string());
            }
            let response = request.send();
            if route.public {
                assert_eq!(
                    response.status, 200,
                    "{method} {}: {response:?}",
                    route.path
                );
                assert!(
                    route
                        .path
                        .starts_with("/.well-known/oauth-protected-resource")
                );
                continue;
            }
            assert!(
                response.header("www-authenticate").is_some(),
                "{method} {}: {response:?}",
                route.path
            );
            refused(response, 401);
        }
    }
    // A path no route serves is behind the same gate.
    let unknown = server.request("GET", "/admin").send();
    refused(unknown, 401);
}

#[test]
fn the_legacy_transport_sees_the_caller_and_refuses_anyone_else() {
    let server = catalogue(&[(
        "HTTP_AUTH_TOKENS",
        "ada-token-0123456789:ada,eve-token-0123456789:eve",
    )]);
    let opened = bearer(server.request("GET", "/sse"), Some("ada-token-0123456789"))
        .header("Accept", "text/event-stream")
        .send();
    assert_eq!(opened.status, 200, "{opened:?}");
    let mut stream = opened.events();
    let endpoint = stream.expect_event();
    assert_eq!(endpoint.event.as_deref(), Some("endpoint"));
    let target = format!("/{}", endpoint.data.expect("the endpoint"));
    let send = |token: &str, message: &Value| {
        bearer(server.request("POST", &target), Some(token))
            .json(message)
            .send()
    };
    assert_eq!(send("ada-token-0123456789", &initialize()).status, 202);
    next_message(&mut stream);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(send("ada-token-0123456789", &initialized).status, 202);
    assert_eq!(
        send("ada-token-0123456789", &call(1, "whoami", json!({}))).status,
        202
    );
    assert_eq!(text(&next_message(&mut stream)), "ada [mcp]");
    // Eve knows the session id (it is in a URL, after all): to her it does not exist.
    refused(
        send("eve-token-0123456789", &call(2, "whoami", json!({}))),
        404,
    );
}

#[test]
fn the_legacy_message_route_checks_the_body_type_and_the_requests_in_flight() {
    let server = catalogue(&[("HTTP_MAX_IN_FLIGHT", "2")]);
    let mut stream = server
        .request("GET", "/sse")
        .header("Accept", "text/event-stream")
        .send()
        .events();
    let target = format!("/{}", stream.expect_event().data.expect("the endpoint"));
    let not_json = server
        .request("POST", &target)
        .header("Content-Type", "text/plain")
        .body(initialize().to_string())
        .send();
    refused(not_json, 415);
    let send = |message: &Value| server.request("POST", &target).json(message).send();
    assert_eq!(send(&initialize()).status, 202);
    next_message(&mut stream);
    send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    for id in 1..=2 {
        assert_eq!(send(&call(id, "sleep", json!({"ms": 60_000}))).status, 202);
    }
    refused(send(&call(3, "sleep", json!({"ms": 1}))), 429);
}

// ---------------------------------------------------------------------------------------
// 2. No state for streams that were never opened

#[test]
fn a_last_event_id_naming_a_stream_never_opened_is_refused() {
    let server = catalogue(&[]);
    let session = session(&server, None);
    for forged in [
        format!("{}-made-up:0", session.id),
        format!("{}-get-x:0", session.id),
        format!("{}-{}:0", session.id, "a".repeat(8 * 1024)),
    ] {
        let response = session.get().header("Last-Event-ID", &forged).send();
        refused(response, 400);
    }
    // The session's own stream resumes as before.
    let own = session
        .get()
        .header("Last-Event-ID", &format!("{}-get:0", session.id))
        .send();
    assert_eq!(own.status, 200, "{own:?}");
}

/// The resident memory of a process, from `/proc`.
#[cfg(target_os = "linux")]
fn resident_bytes(pid: u32) -> u64 {
    mcp_tests::group::memory_kib(pid, "VmRSS").expect("VmRSS") * 1024
}

#[cfg(target_os = "linux")]
#[test]
fn forged_last_event_ids_do_not_grow_the_servers_memory() {
    let server = catalogue(&[]);
    let session = session(&server, None);
    let name = "n".repeat(60 * 1024);
    // Warm up the allocator and the connection paths first.
    for i in 0..50 {
        let _ = session
            .get()
            .header("Last-Event-ID", &format!("{}-{name}{i}:0", session.id))
            .send();
    }
    let before = resident_bytes(server.pid());
    for i in 0..1_500 {
        let response = session
            .get()
            .header("Last-Event-ID", &format!("{}-{name}{i}:0", session.id))
            .send();
        assert_eq!(response.status, 400, "{response:?}");
    }
    let grown = resident_bytes(server.pid()).saturating_sub(before);
    // 1,500 streams of 60 KB names kept would be 90 MB.
    assert!(grown < 16 << 20, "grew by {} MiB", grown >> 20);
}

// ---------------------------------------------------------------------------------------
// 3. Connections: deadlines and limits

#[test]
fn a_client_trickling_its_head_is_disconnected_at_the_header_deadline() {
    let server = catalogue(&[("HTTP_HEADER_TIMEOUT_MS", "300")]);
    let mut tcp = connect(server.addr());
    assert!(
        trickle_head_until_closed(&mut tcp, Duration::from_secs(10)),
        "the connection was still open after 10 s of trickling"
    );
}

#[test]
fn a_head_begun_after_a_long_idle_wait_still_has_only_the_header_deadline() {
    // The idle deadline is a minute away; the head's is 300 ms after its first byte, though
    // nothing tells the connection's watchdog when that byte comes.
    let server = catalogue(&[
        ("HTTP_HEADER_TIMEOUT_MS", "300"),
        ("HTTP_IDLE_TIMEOUT_MS", "60000"),
    ]);
    let mut tcp = connect(server.addr());
    // Idle for longer than the head may take: the watchdog has looked more than once.
    std::thread::sleep(Duration::from_millis(1000));
    assert!(
        trickle_head_until_closed(&mut tcp, Duration::from_secs(10)),
        "the connection was still open after 10 s of trickling (the idle deadline was kept \
         instead of the header deadline)"
    );
}

/// Writes a head a byte now and then, never its end (a slowloris), until the server closes
/// the connection or `limit` passes: whether it closed it.
fn trickle_head_until_closed(tcp: &mut TcpStream, limit: Duration) -> bool {
    let started = Instant::now();
    if tcp
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\n")
        .is_err()
    {
        return true;
    }
    while started.elapsed() < limit {
        if tcp.write_all(b"X").is_err() {
            return true;
        }
        tcp.set_read_timeout(Some(Duration::from_millis(100)))
            .expect("timeout");
        let mut byte = [0u8; 256];
        match tcp.read(&mut byte) {
            Ok(_) => return true,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => {}
        }
    }
    false
}

#[test]
fn an_idle_keep_alive_connection_is_closed_at_the_idle_deadline() {
    let server = catalogue(&[("HTTP_IDLE_TIMEOUT_MS", "300")]);
    let mut tcp = connect(server.addr());
    let request = server
        .request("GET", "/.well-known/oauth-protected-resource")
        .to_bytes();
    tcp.write_all(&request).expect("write");
    let answered = read_until_closed(&mut tcp, Duration::from_secs(10));
    assert_eq!(status_of(&answered), Some(200));
}

#[test]
fn a_body_that_never_arrives_is_408_at_the_body_deadline() {
    let server = catalogue(&[("HTTP_BODY_TIMEOUT_MS", "300")]);
    let mut tcp = connect(server.addr());
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\"",
        server.addr()
    );
    tcp.write_all(head.as_bytes()).expect("write");
    let answer = read_until_closed(&mut tcp, Duration::from_secs(10));
    assert_status(&answer, 408);
}

#[test]
fn connections_past_the_per_peer_limit_get_503_and_the_server_serves_again_after() {
    let server = catalogue(&[("HTTP_MAX_CONNECTIONS_PER_PEER", "8")]);
    let held: Vec<TcpStream> = (0..8).map(|_| connect(server.addr())).collect();
    // Served in order of acceptance: once the ninth is refused, the eight are counted.
    let mut ninth = connect(server.addr());
    let answer = read_until_closed(&mut ninth, Duration::from_secs(10));
    assert_status(&answer, 503);
    for tcp in &held {
        let _ = tcp.shutdown(Shutdown::Both);
    }
    drop(held);
    // The server counts a connection out when it notices the close: soon, not at once.
    wait_until_served(&server, "still refused after the connections closed");
}

/// A connection over the limit is answered 503 before its request is read; the server then
/// drains what the client still sends until it closes, as it does for a refused body, so a
/// client that writes its whole request before it reads gets the 503 rather than a reset.
#[test]
fn a_client_refused_for_the_connection_limit_can_finish_its_request_and_close_cleanly() {
    let server = catalogue(&[("HTTP_MAX_CONNECTIONS_PER_PEER", "1")]);
    let held = served_connection(&server);
    let (tcp, answer) = start_a_large_post(&server);
    assert_status(&answer, 503);
    let text = String::from_utf8_lossy(&answer);
    assert!(text.contains("too many connections"), "{text}");
    finish_the_post_and_close(tcp);
    drop(held);
}

/// Each refused connection that is drained holds a descriptor past the limit, so no more
/// than 16 are drained at once: the next one refused is closed as soon as it is answered
/// (what its client still sends meets a reset), and a place comes back once a drained one
/// ends.
#[test]
fn no_more_than_sixteen_refused_connections_are_drained_at_once() {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, Ordering};
    let server = catalogue(&[("HTTP_MAX_CONNECTIONS_PER_PEER", "1")]);
    let held = served_connection(&server);
    let drained = Mutex::new(Vec::<TcpStream>::new());
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        // The drained ones keep sending from the moment they are refused, so that none goes
        // quiet (2 s) and ends meanwhile. A failed write is left for the end to tell.
        let keeper = scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                for mut tcp in drained.lock().expect("the drained connections").iter() {
                    let _ = tcp.write_all(b" ");
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        // Stops the keeper however this ends: a failed assertion too, which would otherwise
        // leave the scope waiting for it.
        struct StopKeeper<'a>(&'a AtomicBool);
        impl Drop for StopKeeper<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Relaxed);
            }
        }
        let stop_keeper = StopKeeper(&done);
        for _ in 0..16 {
            let (tcp, answer) = start_a_large_post(&server);
            assert_status(&answer, 503);
            drained.lock().expect("the drained connections").push(tcp);
        }
        let mut seventeenth = connect(server.addr());
        seventeenth
            .write_all(&large_post_head(&server))
            .expect("write the head");
        assert_not_drained(&mut seventeenth);

        let first = drained.lock().expect("the drained connections").remove(0);
        finish_the_post_and_close(first);
        // Its place comes back: a connection refused now is drained again (once the server
        // has seen the first one end), while the other 15 still are.
        let deadline = Instant::now() + TIMEOUT;
        while !refused_and_drained(&server) {
            assert!(Instant::now() < deadline, "no place came back");
            std::thread::sleep(Duration::from_millis(20));
        }
        drop(stop_keeper);
        keeper.join().expect("the keeper");
    });
    // The other 15 were drained all along (none ended by its time limit, which would have
    // given a place back too): each takes the rest of its body and closes cleanly.
    for tcp in drained.into_inner().expect("the drained connections") {
        finish_the_post_and_close(tcp);
    }
    drop(held);
}

/// A connection to `server` that has been served once, and so is counted against the limits.
fn served_connection(server: &HttpServer) -> TcpStream {
    let mut held = connect(server.addr());
    held.write_all(
        &server
            .request("GET", "/.well-known/oauth-protected-resource")
            .to_bytes(),
    )
    .expect("write on the held connection");
    held.set_read_timeout(Some(TIMEOUT)).expect("read timeout");
    let mut buffer = [0u8; 4096];
    let n = held
        .read(&mut buffer)
        .expect("the held connection is served");
    assert_status(&buffer[..n], 200);
    held
}

/// Whether a large POST on a new connection, refused with 503 for the connection limit, is
/// drained: its whole body taken, then a clean close.
fn refused_and_drained(server: &HttpServer) -> bool {
    try_start_a_large_post(server).is_ok_and(|(tcp, answer)| {
        status_of(&answer) == Some(503) && try_finish_the_post_and_close(tcp).is_ok()
    })
}

/// Asks for the metadata (a route that needs no token) on a fresh connection until it is
/// served, failing the test with `why` after [`TIMEOUT`].
fn wait_until_served(server: &HttpServer, why: &str) {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let mut tcp = connect(server.addr());
        // Refused or out of descriptors, the server may close before the request is in.
        let _ = tcp.write_all(
            &server
                .request("GET", "/.well-known/oauth-protected-resource")
                .header("Connection", "close")
                .to_bytes(),
        );
        if status_of(&read_until_closed(&mut tcp, TIMEOUT)) == Some(200) {
            return;
        }
        assert!(Instant::now() < deadline, "{why}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A script that starts the catalogue with at most `files` open file descriptors, in a
/// scratch directory that goes when the test ends.
fn with_file_limit(files: u32) -> (Scratch, PathBuf) {
    let scratch = Scratch::new("security-nofile");
    let script = scratch.path("catalogue");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nulimit -n {files} || exit 1\nexec '{}' \"$@\"\n",
            catalogue_path().display()
        ),
    )
    .expect("write the script");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    (scratch, script)
}

#[cfg(unix)]
#[test]
fn stalled_connections_cannot_exhaust_the_servers_file_descriptors() {
    let (_scratch, script) = with_file_limit(200);
    let server = HttpServer::spawn(&script, &[("HTTP_HEADER_TIMEOUT_MS", "1000")]);
    // More stalled connections than the process has descriptors.
    let stalled: Vec<TcpStream> = (0..300).map(|_| connect(server.addr())).collect();
    for tcp in &stalled {
        let _ = tcp.set_nonblocking(true);
        let _ = (&*tcp).write(b"GET /mcp HTTP/1.1\r\n");
    }
    // The server never runs out: it refuses past its limit, closes the stalls at their
    // deadline, and then serves again.
    wait_until_served(
        &server,
        &format!("the server did not serve within {TIMEOUT:?} of 300 stalled connections"),
    );
    drop(stalled);
}

#[test]
fn a_quiet_stream_sends_keep_alive_comments() {
    let server = catalogue(&[("HTTP_SSE_KEEP_ALIVE_MS", "100")]);
    let session = session(&server, None);
    let response = session.get().send();
    assert_eq!(response.status, 200, "{response:?}");
    let mut stream = response.events();
    let mut comments = 0;
    while comments < 3 {
        match stream.next_within(TIMEOUT) {
            Next::Event(event) if event.data.is_none() && event.id.is_none() => comments += 1,
            Next::Event(_) => {}
            other => panic!("no keep-alive comment: {other:?}"),
        }
    }
}

// ---------------------------------------------------------------------------------------
// 5. Sessions: quotas, and bound to their opener

const ADA: &str = "ada-token-0123456789";
const EVE: &str = "eve-token-0123456789";

fn two_callers(extra: &[(&str, &str)]) -> HttpServer {
    let mut env = vec![(
        "HTTP_AUTH_TOKENS",
        "ada-token-0123456789:ada,eve-token-0123456789:eve",
    )];
    env.extend_from_slice(extra);
    catalogue(&env)
}

#[test]
fn a_session_id_with_another_callers_token_is_404() {
    let server = two_callers(&[]);
    let ada = session(&server, Some(ADA));
    assert_eq!(text(&ada.call(1, "whoami", json!({}))), "ada [mcp]");
    let eve = ada.as_caller(Some(EVE));
    refused(eve.post(&call(2, "whoami", json!({}))).send(), 404);
    refused(eve.get().send(), 404);
    refused(eve.headers(server.request("DELETE", "/mcp")).send(), 404);
    // Still Ada's, with any of her tokens.
    assert_eq!(text(&ada.call(3, "whoami", json!({}))), "ada [mcp]");
}

#[test]
fn a_cached_result_is_not_given_to_a_token_without_the_tools_scope() {
    let server = HttpServer::spawn(
        env!("CARGO_BIN_EXE_caller").as_ref(),
        &[
            (
                "HTTP_AUTH_TOKENS",
                "ada-full-0123456789:ada:mcp ledger:read,ada-weak-0123456789:ada:mcp",
            ),
            ("RESPONSE_CACHE", "1"),
        ],
    );
    let full = session(&server, Some("ada-full-0123456789"));
    assert_eq!(
        text(&full.call(1, "read_ledger", json!({}))),
        "ledger read 1 times"
    );
    assert_eq!(
        text(&full.call(2, "read_ledger", json!({}))),
        "ledger read 1 times",
        "the same token is answered from the cache"
    );
    // Ada's other token, in the same session (a session is its subject's, with any of her
    // tokens), lacks the tool's scope: the tool's check answers, not the cache.
    let weak = full.as_caller(Some("ada-weak-0123456789"));
    let refused = weak.post(&call(3, "read_ledger", json!({}))).send();
    assert_eq!(refused.status, 403, "{refused:?}");
    assert!(
        refused
            .header("www-authenticate")
            .is_some_and(|challenge| challenge.contains("ledger:read")),
        "{refused:?}"
    );
}

#[test]
fn a_client_opening_sessions_by_the_hundred_cannot_push_out_anothers() {
    let server = two_callers(&[
        ("HTTP_MAX_SESSIONS", "50"),
        ("HTTP_MAX_SESSIONS_PER_CLIENT", "10"),
    ]);
    let ada = session(&server, Some(ADA));
    for _ in 0..60 {
        session(&server, Some(EVE));
    }
    assert_eq!(text(&ada.call(1, "whoami", json!({}))), "ada [mcp]");
}

#[test]
fn a_session_holding_its_stream_open_is_never_ended_to_make_room() {
    let server = catalogue(&[("HTTP_MAX_SESSIONS", "5")]);
    let busy = session(&server, None);
    let response = busy.get().send();
    assert_eq!(response.status, 200, "{response:?}");
    let _stream = response.events();
    for _ in 0..20 {
        session(&server, None);
    }
    assert_eq!(text(&busy.call(1, "whoami", json!({}))), "anonymous");
}

// ---------------------------------------------------------------------------------------
// 6. Server-wide notifications coalesce per session

#[test]
fn an_idle_session_holds_one_list_changed_however_many_changes_there_were() {
    let server = catalogue(&[]);
    let idle = session(&server, None);
    let actor = session(&server, None);
    for round in 0..20 {
        for (id, enabled) in [(1, false), (2, true)] {
            let toggled = actor.call(
                round * 10 + id,
                "toggle_tool",
                json!({"name": "fast", "enabled": enabled}),
            );
            assert!(text(&toggled).starts_with("changed"), "{toggled}");
        }
        // Past the coalescing window, so each round is a change of its own.
        std::thread::sleep(Duration::from_millis(20));
    }
    // Everything the idle session's stream holds, from its start.
    let response = idle
        .get()
        .header("Last-Event-ID", &format!("{}-get:0", idle.id))
        .send();
    assert_eq!(response.status, 200, "{response:?}");
    let mut stream = response.events();
    let mut changes = 0;
    loop {
        match stream.next_within(Duration::from_millis(500)) {
            Next::Event(event) if event.data.as_deref().is_some_and(|d| !d.is_empty()) => {
                assert_eq!(event.json()["method"], "notifications/tools/list_changed");
                changes += 1;
            }
            Next::Event(_) => {}
            Next::End | Next::TimedOut => break,
        }
    }
    assert_eq!(changes, 1, "one pending notification, not one per change");
    // Once it has fetched the list, the next change is news again.
    json_of(
        idle.post(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}))
            .send(),
    );
    actor.call(99, "toggle_tool", json!({"name": "fast", "enabled": false}));
    loop {
        match stream.next_within(TIMEOUT) {
            Next::Event(event) if event.data.as_deref().is_some_and(|d| !d.is_empty()) => {
                assert_eq!(event.json()["method"], "notifications/tools/list_changed");
                break;
            }
            Next::Event(_) => {}
            other => panic!("no notification after the list was fetched: {other:?}"),
        }
    }
}

// ---------------------------------------------------------------------------------------
// 7. requestState keys

#[test]
fn a_short_request_state_key_stops_the_server_at_start_naming_the_problem() {
    let output = std::process::Command::new(catalogue_path())
        .env("MCP_STATE_KEY", "password")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run the catalogue");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("requestState key has 8 bytes") && stderr.contains("at least 32"),
        "{stderr}"
    );
}

// ---------------------------------------------------------------------------------------
// 8. Time limits and shutdown that really stop

#[test]
fn a_handler_awaiting_only_the_runtime_is_stopped_at_its_limit_and_others_are_served() {
    let mut server = StdioServer::spawn_with_env(catalogue_path(), &[("TOOL_TIMEOUT_MS", "500")]);
    server.initialize(LATEST);
    server.request(1, "tools/call", json!({"name": "chatter", "arguments": {}}));
    server.request(2, "ping", json!({}));
    // Without yielding, the handler would hold the one stdio thread: neither the ping nor
    // the limit's timer would ever run.
    let ping = server.response(2);
    assert_eq!(ping["result"], json!({}), "{ping}");
    let stopped = server.response(1);
    assert_eq!(stopped["result"]["isError"], true, "{stopped}");
    assert!(
        text(&stopped).contains("did not finish within 500 ms"),
        "{stopped}"
    );
}

#[test]
fn sigterm_ends_calls_that_outlive_the_grace_period() {
    let mut server = catalogue(&[("SHUTDOWN_GRACE_MS", "300")]);
    let session = session(&server, None);
    // One call that stops when cancelled, one that ignores cancellation; each reports
    // progress first, so its stream shows it is running.
    let mut streams: Vec<EventStream> = [
        json!({"name": "slow_progress", "arguments": {"steps": 2, "pause_ms": 60_000}}),
        json!({"name": "stubborn", "arguments": {"ms": 60_000}}),
    ]
    .into_iter()
    .enumerate()
    .map(|(id, mut params)| {
        params["_meta"] = json!({"progressToken": id});
        let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        let response = session.post(&message).send();
        assert_eq!(response.status, 200, "{response:?}");
        let mut stream = response.events();
        assert_eq!(
            next_message(&mut stream)["method"],
            "notifications/progress"
        );
        stream
    })
    .collect();
    let started = Instant::now();
    server.terminate();
    let status = server.wait();
    assert!(status.success(), "{status:?}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the process ran {:?} past SIGTERM with a 300 ms grace",
        started.elapsed()
    );
    // The calls' streams end without an answer.
    for stream in &mut streams {
        let rest = stream.until_end();
        assert!(
            rest.iter()
                .all(|e| !e.data.as_deref().unwrap_or("").contains("result")),
            "{rest:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// 10. Header parsing

#[test]
fn malformed_or_duplicate_host_and_origin_headers_are_refused() {
    let server = catalogue(&[]);
    let probe = |request: Request| request.json(&initialize()).send();
    let base = || {
        server
            .request("POST", "/mcp")
            .header("Accept", "application/json, text/event-stream")
    };
    refused(probe(base().header("Origin", "evil://localhost")), 403);
    refused(probe(base().header("Origin", "null")), 403);
    refused(probe(base().header("Host", "localhost:evil.com")), 400);
    refused(probe(base().header("Host", "[::1].evil.com")), 400);
    // An empty Host, first on its connection (where nothing has passed yet), is no host.
    refused(probe(base().header("Host", "")), 400);
    // Two Host lines, two Origin lines: the request is ambiguous (RFC 9112 §3.2).
    let twice = |request: Request, name: &str, value: &str| {
        with_another_line(&server, request.json(&initialize()), name, value)
    };
    assert_eq!(twice(base(), "Host", "localhost"), Some(400));
    let origin = || base().header("Origin", "http://localhost");
    assert_eq!(twice(origin(), "Origin", "http://localhost"), Some(400));
    assert_eq!(twice(base(), "Content-Type", "application/json"), Some(400));
    let authorized = || base().header("Authorization", "Bearer a");
    assert_eq!(twice(authorized(), "Authorization", "Bearer b"), Some(400));
    // One of each is served.
    assert_eq!(probe(origin()).status, 200);
}

/// The status of `request` sent with one more header line, `name: value`, right after its
/// request line (so that it comes before a line of the same name the request has).
fn with_another_line(
    server: &HttpServer,
    request: Request,
    name: &str,
    value: &str,
) -> Option<u16> {
    let mut bytes = request.to_bytes();
    let at = bytes
        .windows(2)
        .position(|w| w == b"\r\n")
        .expect("a request line")
        + 2;
    bytes.splice(at..at, format!("{name}: {value}\r\n").into_bytes());
    let mut tcp = connect(server.addr());
    tcp.write_all(&bytes).expect("write");
    status_of(&read_until_closed(&mut tcp, TIMEOUT))
}

/// The `_meta` that makes a request one of the 2026-07-28 era, with no capabilities.
fn stateless_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// A proxy may route on the MCP headers: one that reads the last of two lines would see
/// another session, revision, method, item or argument than the server, which reads the
/// first. Two lines of any of them are refused, as two `Host` lines are, on every era.
#[test]
fn a_repeated_mcp_header_is_refused_before_anything_is_served() {
    let server = catalogue(&[]);
    let call = |name: &str, value: &str| {
        server
            .request("POST", "/mcp")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", "static_text")
            .header(name, value)
            .json(&json!({
                "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {
                    "name": "static_text", "arguments": {},
                    "_meta": stateless_meta()
                }
            }))
    };
    // With one line of each, the call is served.
    let served = call("Mcp-Param-Region", "eu").send();
    let status = served.status;
    assert_eq!(status, 200, "{}", served.text());
    for (name, first, second) in [
        ("Mcp-Name", "static_text", "float"),
        ("Mcp-Method", "tools/call", "tools/list"),
        ("MCP-Protocol-Version", "2026-07-28", "2025-06-18"),
        ("Mcp-Session-Id", "a", "b"),
        ("Last-Event-ID", "1", "2"),
        ("Mcp-Param-Region", "eu", "us"),
        ("mcp-param-region", "eu", "eu"),
    ] {
        assert_eq!(
            with_another_line(&server, call(name, first), name, second),
            Some(400),
            "{name}"
        );
    }
}

/// A request of the 2026-07-28 era is held to its `Mcp-*` headers when it comes alone. In a
/// batch of a 2025-03-26 session it would escape that comparison, so it is refused there,
/// never served: its headers here name another method, tool and region than its body.
#[test]
fn a_request_of_the_stateless_era_cannot_pass_its_header_check_inside_a_batch() {
    let server = catalogue(&[]);
    let session = Session::open(&server, "2025-03-26");
    let call = json!({
        "jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {
            "name": "route", "arguments": {"region": "eu-west", "query": "q"},
            "_meta": stateless_meta()
        }
    });
    let misleading = |request: Request| {
        request
            .header("Mcp-Method", "tools/list")
            .header("Mcp-Name", "static_text")
            .header("Mcp-Param-Region", "us-east")
    };
    // Alone, the disagreement is refused.
    let alone = misleading(session.post(&call)).send();
    assert_eq!(alone.status, 400);
    assert_eq!(alone.json()["error"]["code"], -32020);
    // In a batch, the request is refused and the tool does not run.
    let batch = misleading(session.post(&json!([call]))).send().json();
    assert_eq!(batch[0]["id"], 5, "{batch}");
    assert_eq!(batch[0]["error"]["code"], -32600, "{batch}");
    assert!(batch[0].get("result").is_none(), "{batch}");
}

/// Header values a proxy may read otherwise than the server: bytes that are not visible
/// ASCII (which the server once took for no header at all), and integers past 2^53 (which
/// it once compared as floats). Each is refused as a mismatch.
#[test]
fn a_header_a_proxy_may_read_otherwise_than_the_server_is_refused() {
    let server = catalogue(&[]);
    let stateless = |method: &str, params: Value| {
        let mut params = params;
        params["_meta"] = stateless_meta();
        server
            .request("POST", "/mcp")
            .header("Accept", "application/json, text/event-stream")
            .header("Mcp-Method", method)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
    };
    let mismatch = |request: Request| {
        let response = request.send();
        assert_eq!(response.status, 400);
        let body = response.json();
        assert_eq!(body["error"]["code"], -32020, "{body}");
    };
    let version = |request: Request, value: &str| request.header("MCP-Protocol-Version", value);
    mismatch(version(
        stateless("tools/list", json!({})),
        "2026-07-28\u{e9}",
    ));
    mismatch(
        version(stateless("tools/list", json!({})), "2026-07-28").header("Mcp-Name", "gr\u{e9}et"),
    );
    let route = |shard: u64| {
        version(
            stateless(
                "tools/call",
                json!({"name": "route", "arguments": {"region": "eu", "query": "q", "shard": shard}}),
            ),
            "2026-07-28",
        )
        .header("Mcp-Name", "route")
        .header("Mcp-Param-Region", "eu")
    };
    mismatch(route(9_007_199_254_740_993).header("Mcp-Param-Shard", "9007199254740992"));
    let served = route(9_007_199_254_740_993)
        .header("Mcp-Param-Shard", "9007199254740993")
        .send();
    assert_eq!(served.status, 200);
}

/// Ending a session names a revision like any other request: an unknown one is 400, and
/// the session lives on.
#[test]
fn a_delete_naming_an_unknown_revision_is_refused_and_ends_nothing() {
    let server = catalogue(&[]);
    let session = Session::open(&server, "2025-11-25");
    let delete = session
        .headers(server.request("DELETE", "/mcp"))
        .without_header("MCP-Protocol-Version")
        .header("MCP-Protocol-Version", "1999-01-01")
        .send();
    assert_eq!(delete.status, 400);
    let ping = session.request(1, "ping", json!({}));
    assert_eq!(ping["result"], json!({}), "{ping}");
}

/// A connection remembers the `Host` its last request passed with, so as not to parse it
/// again: what follows on the same connection must still be judged on its own.
#[test]
fn a_host_that_passed_on_a_connection_lets_no_other_host_through_after_it() {
    let server = catalogue(&[]);
    let base = || {
        server
            .request("POST", "/mcp")
            .header("Accept", "application/json, text/event-stream")
    };
    // Two requests written at once on one keep-alive connection; a refusal closes it.
    let statuses = |second: Request| {
        let mut bytes = base().json(&initialize()).to_bytes();
        bytes.extend(second.json(&initialize()).to_bytes());
        let mut tcp = connect(server.addr());
        tcp.write_all(&bytes).expect("write");
        let raw = String::from_utf8_lossy(&read_until_closed(&mut tcp, TIMEOUT)).into_owned();
        raw.match_indices("HTTP/1.1 ")
            .filter_map(|(at, _)| raw[at + 9..].get(..3)?.parse::<u16>().ok())
            .collect::<Vec<_>>()
    };
    assert_eq!(statuses(base().header("Host", "evil.example")), [200, 403]);
    assert_eq!(
        statuses(base().header("Host", "localhost:evil.com")),
        [200, 400]
    );
    assert_eq!(
        statuses(base().header("Origin", "http://evil.example")),
        [200, 403]
    );
    // An absolute-form target names its own authority, which is checked too.
    let host = format!("{}", server.addr());
    let absolute = server
        .request("POST", "http://evil.example/mcp")
        .header("Host", &host)
        .header("Accept", "application/json, text/event-stream");
    assert_eq!(statuses(absolute), [200, 403]);
}

#[test]
fn an_accept_that_passed_on_a_connection_lets_no_other_accept_through_after_it() {
    let server = catalogue(&[]);
    let with = |accept: &str| {
        server
            .request("POST", "/mcp")
            .header("Accept", accept)
            .json(&initialize())
            .to_bytes()
    };
    // Four requests written at once on one keep-alive connection, the last closing it.
    let mut bytes = with("application/json, text/event-stream");
    bytes.extend(with("application/json"));
    bytes.extend(with("application/json, text/event-stream;q=0"));
    bytes.extend(
        server
            .request("POST", "/mcp")
            .header("Accept", "application/json, text/event-stream")
            .header("Connection", "close")
            .json(&initialize())
            .to_bytes(),
    );
    let mut tcp = connect(server.addr());
    tcp.write_all(&bytes).expect("write");
    let raw = String::from_utf8_lossy(&read_until_closed(&mut tcp, TIMEOUT)).into_owned();
    let statuses: Vec<u16> = raw
        .match_indices("HTTP/1.1 ")
        .filter_map(|(at, _)| raw[at + 9..].get(..3)?.parse().ok())
        .collect();
    assert_eq!(statuses, [200, 406, 406, 200], "{raw}");
}

#[test]
fn the_challenge_and_metadata_never_carry_a_host_they_did_not_check() {
    let server = catalogue(&[("HTTP_AUTH_TOKEN", TOKEN), ("HTTP_ALLOWED_HOSTS", "*")]);
    let response = post(&server, "/mcp", &initialize())
        .header("Host", "evil\", error=\"x")
        .send();
    refused(response, 400);
    let response = post(&server, "/mcp", &initialize()).send();
    let challenge = response
        .header("www-authenticate")
        .unwrap_or_default()
        .to_owned();
    assert_eq!(
        challenge,
        format!(
            "Bearer resource_metadata=\"{}\"",
            server.url("/.well-known/oauth-protected-resource/mcp")
        )
    );
    refused(response, 401);
    // The metadata is served where the challenge says, and at the bare path.
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let metadata = json_of(server.request("GET", path).send());
        assert_eq!(metadata["resource"], server.url("/mcp"), "{path}");
    }
}

#[test]
fn the_bearer_scheme_is_matched_in_any_case() {
    let server = catalogue(&[("HTTP_AUTH_TOKEN", TOKEN)]);
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let response = post(&server, "/mcp", &initialize())
            .header("Authorization", &format!("{scheme} {TOKEN}"))
            .send();
        assert_eq!(response.status, 200, "{scheme}: {response:?}");
    }
}

#[test]
fn media_types_are_compared_as_media_types() {
    let server = catalogue(&[]);
    let with = |content_type: &str, accept: &str| {
        server
            .request("POST", "/mcp")
            .header("Accept", accept)
            .header("Content-Type", content_type)
            .body(initialize().to_string())
            .send()
    };
    let both = "application/json, text/event-stream";
    assert_eq!(with("APPLICATION/JSON", both).status, 200);
    assert_eq!(with("application/json; charset=UTF-8", both).status, 200);
    assert_eq!(
        with("application/json", "APPLICATION/JSON, TEXT/EVENT-STREAM").status,
        200
    );
    refused(with("application/jsonx", both), 415);
    refused(with("application/json; charset=utf-16", both), 415);
    refused(
        with(
            "application/json",
            "application/json;q=0, text/event-stream",
        ),
        406,
    );
    refused(with("application/json", "*/*, text/event-stream;q=0"), 406);
}

#[test]
fn an_oversized_body_is_a_json_413_and_never_invited() {
    let server = catalogue(&[("HTTP_MAX_BODY_BYTES", "1024")]);
    let big = post(&server, "/mcp", &json!({"padding": "x".repeat(4096)})).send();
    refused(big, 413);
    // A declared 100 MiB body with `Expect: 100-continue`: refused at once, no 100.
    let mut tcp = connect(server.addr());
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Expect: 100-continue\r\n\r\n",
        server.addr(),
        100u64 << 20
    );
    tcp.write_all(head.as_bytes()).expect("write");
    let answer = read_until_closed(&mut tcp, TIMEOUT);
    let text = String::from_utf8_lossy(&answer);
    assert!(!text.contains("100 Continue"), "{text}");
    assert_eq!(status_of(&answer), Some(413), "{text}");
    assert!(text.contains("\"error\""), "a JSON-RPC error body: {text}");
}

/// A body refused before it is read (its declared length is over the limit) is answered at
/// once, and the server then drains what the client still sends until the client closes:
/// closing with bytes unread would reset the connection, and a client that writes its whole
/// request before it reads would lose its write and with it the answer.
#[test]
fn a_client_still_sending_a_refused_body_can_finish_it_and_close_cleanly() {
    let server = catalogue(&[("HTTP_MAX_BODY_BYTES", "1024")]);
    // The answer, and the end of the server's side, come before the body is all sent.
    let (tcp, answer) = start_a_large_post(&server);
    let text = String::from_utf8_lossy(&answer);
    assert_eq!(status_of(&answer), Some(413), "{text}");
    // The rest of the body is taken, and the connection ends with both sides closed, not
    // reset.
    finish_the_post_and_close(tcp);
}

/// The size of the body [`start_a_large_post`] declares.
const LARGE_BODY: usize = 1 << 20;

/// Writes the head of a POST declaring a body of [`LARGE_BODY`] bytes and the body's first
/// 4 KiB, then reads what the server answers until it closes its side.
fn start_a_large_post(server: &HttpServer) -> (TcpStream, Vec<u8>) {
    try_start_a_large_post(server).unwrap_or_else(|why| panic!("{why}"))
}

/// [`start_a_large_post`], saying what failed rather than failing the test.
fn try_start_a_large_post(server: &HttpServer) -> Result<(TcpStream, Vec<u8>), String> {
    let mut tcp = connect(server.addr());
    // A regression that stops reading fails the test rather than hanging it.
    tcp.set_write_timeout(Some(TIMEOUT)).expect("write timeout");
    tcp.write_all(&large_post_head(server))
        .map_err(|e| format!("write the head and the start of the body: {e}"))?;
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    tcp.set_read_timeout(Some(TIMEOUT)).expect("read timeout");
    loop {
        match tcp.read(&mut buffer) {
            Ok(0) => return Ok((tcp, answer)),
            Ok(n) => answer.extend_from_slice(&buffer[..n]),
            Err(e) => return Err(format!("read the answer: {e}")),
        }
    }
}

/// The head of a POST of [`LARGE_BODY`] bytes and the first 4 KiB of its body.
fn large_post_head(server: &HttpServer) -> Vec<u8> {
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {LARGE_BODY}\r\n\r\n",
        server.addr(),
    )
    .into_bytes();
    head.extend_from_slice(&[b' '; 4096]);
    head
}

/// Writes the rest of [`start_a_large_post`]'s body and closes the client's side: the write
/// must be taken and the connection end cleanly, not with a reset.
fn finish_the_post_and_close(tcp: TcpStream) {
    if let Err(why) = try_finish_the_post_and_close(tcp) {
        panic!("{why}");
    }
}

/// [`finish_the_post_and_close`], saying what failed rather than failing the test.
fn try_finish_the_post_and_close(mut tcp: TcpStream) -> Result<(), String> {
    tcp.write_all(&vec![b' '; LARGE_BODY - 4096])
        .map_err(|e| format!("write the rest of the body after the answer: {e}"))?;
    tcp.shutdown(Shutdown::Write)
        .map_err(|e| format!("close the client's side: {e}"))?;
    let mut buffer = [0u8; 16];
    match tcp.read(&mut buffer) {
        Ok(0) => Ok(()),
        Ok(n) => Err(format!("more bytes after the end: {n}")),
        Err(e) => Err(format!(
            "the connection ended with {e} rather than a clean close"
        )),
    }
}

/// Only a refusal is drained: a connection its client asked to close (`Connection: close`)
/// is closed as soon as it is answered, so what the client sends after the answer is met
/// with a reset at once, not read and dropped for seconds (up to 16 MiB) while the
/// connection holds its slot.
#[test]
fn a_connection_its_client_asked_to_close_is_not_drained() {
    let server = catalogue(&[]);
    let mut tcp = connect(server.addr());
    tcp.write_all(
        &server
            .request("GET", "/.well-known/oauth-protected-resource")
            .header("Connection", "close")
            .to_bytes(),
    )
    .expect("write the request");
    let answer = read_until_closed(&mut tcp, TIMEOUT);
    assert_status(&answer, 200);
    assert_not_drained(&mut tcp);
}

/// The server's socket of `tcp` is closed: what arrives next is answered with a reset, which
/// the next write (or the one after) reports. A drained connection takes it all instead.
fn assert_not_drained(tcp: &mut TcpStream) {
    tcp.set_write_timeout(Some(TIMEOUT)).expect("write timeout");
    let chunk = vec![b' '; 64 << 10];
    let mut sent = 0usize;
    let refused = loop {
        match tcp.write(&chunk) {
            Ok(n) => sent += n,
            Err(e) => break e,
        }
        assert!(
            sent < 8 << 20,
            "{sent} bytes taken after the answer: the connection is being drained"
        );
    };
    assert!(
        matches!(
            refused.kind(),
            std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe
        ),
        "{refused}"
    );
}

/// A body sent in chunks arrives in several frames: it is read whole, and cut off at the
/// limit when the chunks add up past it (no length was declared to refuse it by).
#[test]
fn a_chunked_body_is_read_whole_and_held_to_the_limit() {
    let server = catalogue(&[("HTTP_MAX_BODY_BYTES", "1024")]);
    let send = |chunks: &[&[u8]]| {
        let mut raw = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\
             Connection: close\r\n\r\n",
            server.addr()
        )
        .into_bytes();
        for chunk in chunks {
            raw.extend(format!("{:x}\r\n", chunk.len()).into_bytes());
            raw.extend_from_slice(chunk);
            raw.extend_from_slice(b"\r\n");
        }
        raw.extend_from_slice(b"0\r\n\r\n");
        let mut tcp = connect(server.addr());
        tcp.write_all(&raw).expect("write");
        read_until_closed(&mut tcp, TIMEOUT)
    };
    let message = serde_json::to_vec(&initialize()).unwrap();
    let (a, rest) = message.split_at(7);
    let (b, c) = rest.split_at(rest.len() / 2);
    let answer = send(&[a, b, c]);
    let text = String::from_utf8_lossy(&answer);
    assert_eq!(status_of(&answer), Some(200), "{text}");
    assert!(text.contains("\"protocolVersion\""), "{text}");
    let piece = [b' '; 400];
    let answer = send(&[&message, &piece, &piece, &piece]);
    assert_status(&answer, 413);
}

// ---------------------------------------------------------------------------------------
// 11. The message log

#[cfg(unix)]
#[test]
fn the_message_log_is_private_and_redacts_the_values_it_is_told_to() {
    use std::os::unix::fs::PermissionsExt as _;
    let scratch = Scratch::new("security-trace");
    let log = scratch.path("trace.log");
    let mut server = StdioServer::spawn_with_env(
        catalogue_path(),
        &[
            ("MCP_TRACE", log.to_str().expect("a UTF-8 path")),
            ("MCP_TRACE_REDACT", "password"),
        ],
    );
    server.initialize(LATEST);
    server.request(
        1,
        "tools/call",
        json!({"name": "login", "arguments": {"user": "ada", "password": "hunter2-secret"}}),
    );
    let answer = server.response(1);
    assert!(text(&answer).starts_with("welcome ada"), "{answer}");
    drop(server);
    let mode = std::fs::metadata(&log)
        .expect("the log")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}");
    let written = std::fs::read_to_string(&log).expect("read the log");
    assert!(written.contains("\"user\":\"ada\""), "{written}");
    assert!(!written.contains("hunter2-secret"), "{written}");
    assert!(written.contains("[redacted]"), "{written}");
}

// ---------------------------------------------------------------------------------------
// Found by a second review: what a client can make the server hold or run

#[test]
fn a_legacy_session_whose_stream_is_not_read_refuses_more_requests() {
    let server = catalogue(&[]);
    let (stream, target) = legacy_session(&server, json!({}));
    let send = |message: &Value| server.request("POST", &target).json(message).send();
    // The stream is not read from here on; its answers pile up until the session is told
    // to read them.
    let listing = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let mut refused_at = None;
    for n in 0..20_000 {
        let response = send(&listing);
        if response.status == 429 {
            refused_at = Some(n);
            break;
        }
        assert_eq!(response.status, 202, "{response:?}");
    }
    assert!(
        refused_at.is_some(),
        "20,000 answers queued for a stream nobody reads"
    );
    drop(stream);
}

/// A legacy session's stream, open, with its endpoint and the session initialised (with
/// `capabilities`), and how to post to it.
fn legacy_session(server: &HttpServer, capabilities: Value) -> (EventStream, String) {
    let opened = server
        .request("GET", "/sse")
        .header("Accept", "text/event-stream")
        .send();
    assert_eq!(opened.status, 200, "{opened:?}");
    let mut stream = opened.events();
    let target = format!("/{}", stream.expect_event().data.expect("the endpoint"));
    let mut hello = initialize();
    hello["params"]["capabilities"] = capabilities;
    let send = |message: &Value| server.request("POST", &target).json(message).send();
    assert_eq!(send(&hello).status, 202);
    next_message(&mut stream);
    send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    (stream, target)
}

#[test]
fn a_legacy_message_without_one_session_id_is_refused_with_a_json_rpc_error() {
    let server = catalogue(&[]);
    let (_stream, target) = legacy_session(&server, json!({}));
    let id = target.split_once("sessionId=").expect("the session id").1;
    for query in [
        String::new(),
        "?other=1".to_owned(),
        format!("?sessionId={id}&sessionId={id}"),
    ] {
        let response = server
            .request("POST", &format!("/messages{query}"))
            .json(&call(1, "fast", json!({})))
            .send();
        let message = refused(response, 400);
        assert!(message.contains("sessionId"), "{query}: {message}");
    }
}

#[test]
fn a_clients_session_quota_counts_the_sessions_of_both_transports() {
    let server = catalogue(&[("HTTP_MAX_SESSIONS_PER_CLIENT", "3")]);
    let _legacy = [
        legacy_session(&server, json!({})),
        legacy_session(&server, json!({})),
    ];
    // Two of three held on the legacy transport: the endpoint keeps one session of this
    // client, giving up its older one for the newer.
    let first = session(&server, None);
    let second = session(&server, None);
    refused(first.post(&call(1, "fast", json!({}))).send(), 404);
    assert_eq!(text(&second.call(2, "fast", json!({}))), "fast");
    // And the legacy transport, with the quota full over both, opens no more.
    let more = server
        .request("GET", "/sse")
        .header("Accept", "text/event-stream")
        .send();
    refused(more, 429);
}

#[test]
fn a_legacy_clients_answer_to_a_server_request_gets_through_at_the_in_flight_limit() {
    let server = catalogue(&[("HTTP_MAX_IN_FLIGHT", "1")]);
    let (mut stream, target) = legacy_session(&server, json!({"sampling": {}}));
    let send = |message: &Value| server.request("POST", &target).json(message).send();
    let question = call(1, "ask_model", json!({"question": "Capital of Peru?"}));
    assert_eq!(send(&question).status, 202);
    let request = next_message(&mut stream);
    assert_eq!(request["method"], "sampling/createMessage", "{request}");
    // The call holds the session's one slot; its answer is no request, and takes none.
    let answer = json!({
        "jsonrpc": "2.0",
        "id": request["id"],
        "result": {
            "role": "assistant",
            "content": {"type": "text", "text": "Lima"},
            "model": "test-model",
        },
    });
    let posted = send(&answer);
    assert_eq!(posted.status, 202, "{posted:?}");
    let result = next_message(&mut stream);
    assert_eq!(text(&result), "Lima (by test-model)", "{result}");
    // Nor does a cancellation.
    assert_eq!(send(&call(2, "sleep", json!({"ms": 60_000}))).status, 202);
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 2}});
    assert_eq!(send(&cancel).status, 202);
}

#[test]
fn a_legacy_stream_not_read_holds_its_backlog_of_large_answers_and_no_more() {
    let server = catalogue(&[("HTTP_MAX_IN_FLIGHT", "1")]);
    let (stream, target) = legacy_session(&server, json!({}));
    let send = |message: &Value| server.request("POST", &target).json(message).send();
    // Answers of 2 MiB each, to a client that reads none of them: each is taken once the
    // one before it has been answered (the session holds one call at a time).
    let deadline = Instant::now() + TIMEOUT;
    let mut accepted = 0;
    loop {
        assert!(Instant::now() < deadline, "never refused");
        let response = send(&call(accepted + 1, "enormous", json!({"megabytes": 2})));
        if response.status == 202 {
            accepted += 1;
            continue;
        }
        let message = refused(response, 429);
        if message.contains("not read") {
            break;
        }
        assert!(message.contains("in flight"), "{message}");
        // The call before is still being answered.
        std::thread::sleep(Duration::from_millis(2));
    }
    // What the connection's buffers took, one answer waiting to be written, and the
    // backlog of 1 MiB: a few answers, where 64 more used to wait in a channel uncounted.
    assert!(accepted < 16, "{accepted} answers of 2 MiB held");
    drop(stream);
}

#[test]
fn a_batch_is_bounded_in_length() {
    let mut server = StdioServer::spawn(catalogue_path());
    server.initialize("2025-03-26");
    let batch: Vec<Value> = (0..65)
        .map(|id| json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
        .collect();
    server.send(&Value::Array(batch));
    let refusal = server.recv();
    assert_eq!(refusal["error"]["code"], -32600, "{refusal}");
    assert!(
        refusal["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("at most 64")),
        "{refusal}"
    );
    let batch: Vec<Value> = (0..64)
        .map(|id| json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
        .collect();
    server.send(&Value::Array(batch));
    let answers = server.recv();
    assert_eq!(answers.as_array().map(Vec::len), Some(64), "{answers}");
}

#[test]
fn a_session_holds_a_bounded_number_of_subscriptions() {
    let mut server = StdioServer::spawn(catalogue_path());
    server.initialize(LATEST);
    for n in 0..1024 {
        server.request(
            n,
            "resources/subscribe",
            json!({"uri": format!("test://items/{n}/data")}),
        );
        let answer = server.response(n);
        assert_eq!(answer["result"], json!({}), "{answer}");
    }
    server.request(
        1024,
        "resources/subscribe",
        json!({"uri": "test://items/1024/data"}),
    );
    let refused = server.response(1024);
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    // Subscribed again to one it holds: still fine.
    server.request(
        1025,
        "resources/subscribe",
        json!({"uri": "test://items/7/data"}),
    );
    assert_eq!(server.response(1025)["result"], json!({}));
}

/// A session's subscriptions, and a listener's filter, are held for as long as they live:
/// their URIs are bounded in bytes as well as in number (1,024 of 64 KiB each would be
/// 64 MiB a session).
#[test]
fn subscriptions_are_bounded_in_bytes_too() {
    let long = |n: usize| format!("test://files/{n}/{}", "a".repeat(60_000));
    let mut server = StdioServer::spawn(catalogue_path());
    server.initialize(LATEST);
    for n in 0..4 {
        server.request(n, "resources/subscribe", json!({"uri": long(n as usize)}));
        let answer = server.response(n);
        assert_eq!(answer["result"], json!({}), "{answer}");
    }
    server.request(4, "resources/subscribe", json!({"uri": long(4)}));
    let refused = server.response(4);
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("256 KiB"),
        "{refused}"
    );
    // A short one still fits.
    server.request(
        5,
        "resources/subscribe",
        json!({"uri": "test://files/short"}),
    );
    assert_eq!(server.response(5)["result"], json!({}));

    // A listener of the 2026-07-28 era: the same bound on its filter.
    let listen = |uris: Vec<String>| {
        json!({
            "notifications": {"resourceSubscriptions": uris},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        })
    };
    server.request(
        6,
        "subscriptions/listen",
        listen((0..5).map(long).collect()),
    );
    let refused = server.response(6);
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
}

#[test]
fn the_public_metadata_route_takes_no_body() {
    let server = catalogue(&[("HTTP_AUTH_TOKEN", TOKEN)]);
    let response = server
        .request("GET", "/.well-known/oauth-protected-resource")
        .body("x".repeat(4096))
        .send();
    refused(response, 413);
    let mut tcp = connect(server.addr());
    let head = format!(
        "GET /.well-known/oauth-protected-resource HTTP/1.1\r\nHost: {}\r\n\
         Content-Length: 4000000\r\nExpect: 100-continue\r\n\r\n",
        server.addr()
    );
    tcp.write_all(head.as_bytes()).expect("write");
    let answer = read_until_closed(&mut tcp, TIMEOUT);
    let text = String::from_utf8_lossy(&answer);
    assert!(!text.contains("100 Continue"), "{text}");
    assert_eq!(status_of(&answer), Some(413), "{text}");
}

#[test]
fn an_overlong_token_is_refused_before_it_is_verified() {
    let server = catalogue(&[("HTTP_AUTH_TOKEN", TOKEN)]);
    let response = post(&server, "/mcp", &initialize())
        .header(
            "Authorization",
            &format!("Bearer {}", "A".repeat(64 * 1024)),
        )
        .send();
    let message = refused(response, 401);
    assert!(message.contains("longer than"), "{message}");
}

#[test]
fn a_request_target_with_an_authority_still_needs_a_host() {
    let server = catalogue(&[]);
    let mut tcp = connect(server.addr());
    let body = initialize().to_string();
    let request = format!(
        "POST http://{addr}/mcp HTTP/1.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        body.len(),
        addr = server.addr()
    );
    tcp.write_all(request.as_bytes()).expect("write");
    let answer = read_until_closed(&mut tcp, TIMEOUT);
    assert_status(&answer, 400);
}

#[test]
fn a_client_spreading_calls_over_sessions_is_bounded_in_all() {
    let server = catalogue(&[("HTTP_MAX_IN_FLIGHT_PER_CLIENT", "4")]);
    let sessions: Vec<Session> = (0..3).map(|_| session(&server, None)).collect();
    // Calls left running, two in each of two sessions: each reports progress before it
    // pauses, so its open stream shows it is in flight (and counted).
    let mut held = Vec::new();
    for (n, session) in sessions.iter().take(2).enumerate() {
        for id in 0..2 {
            let id = id + 10 * n as i64;
            let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                "name": "slow_progress",
                "arguments": {"steps": 2, "pause_ms": 60_000},
                "_meta": {"progressToken": id},
            }});
            let response = session.post(&message).send();
            assert_eq!(response.status, 200, "{response:?}");
            let mut stream = response.events();
            assert_eq!(
                next_message(&mut stream)["method"],
                "notifications/progress"
            );
            held.push(stream);
        }
    }
    // A fifth, in a third session, is refused.
    let message = refused(sessions[2].post(&call(99, "fast", json!({}))).send(), 429);
    assert!(message.contains("this client"), "{message}");
    drop(held);
}

#[test]
fn listen_streams_do_not_take_the_slots_of_other_requests() {
    let server = catalogue(&[("HTTP_MAX_IN_FLIGHT_SESSIONLESS", "2")]);
    let modern = |id: i64, method: &str, params: Value| {
        let mut params = params;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        server
            .request("POST", "/mcp")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", method)
            .json(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
    };
    let listeners: Vec<EventStream> = (0..2)
        .map(|id| {
            let response = modern(
                id,
                "subscriptions/listen",
                json!({"notifications": {"toolsListChanged": true}}),
            )
            .send();
            assert_eq!(response.status, 200, "{response:?}");
            response.events()
        })
        .collect();
    let answered = modern(5, "tools/call", json!({"name": "fast", "arguments": {}}))
        .header("Mcp-Name", "fast")
        .send();
    assert_eq!(answered.status, 200, "{answered:?}");
    drop(listeners);
}

#[test]
fn tasks_are_bounded_per_caller() {
    use mcp_tests::peer::{MODERN, Peer, Transport};
    let mut peer = Peer::open(
        catalogue_path(),
        Transport::Stdio,
        MODERN,
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}),
    );
    for _ in 0..64 {
        let reply = peer.call(
            "tools/call",
            json!({"name": "chore", "arguments": {"ms": 60_000}}),
        );
        assert_eq!(reply.result()["resultType"], "task", "{:?}", reply.message);
    }
    let refused = peer.call(
        "tools/call",
        json!({"name": "chore", "arguments": {"ms": 60_000}}),
    );
    assert_eq!(refused.error_code(), -32000, "{:?}", refused.message);
}
