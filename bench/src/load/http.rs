//! The Streamable HTTP transport of the driver: start the server with `--http 127.0.0.1:0`,
//! wait for the line on its standard error that says where it listens, time the first
//! request, then spread the calls over `concurrency` keep-alive connections, one call in
//! flight on each (HTTP/1.1 without pipelining), one thread per connection.
//!
//! In the handshake era (2025-11-25) every connection opens a session of its own with
//! `initialize` and `notifications/initialized` before the calls; in the stateless era
//! (2026-07-28) requests carry their `_meta` and headers and nothing comes before them but
//! one `server/discover`, on the first connection, which is what the cold start times.
//!
//! Every response is checked: status 200, then either a JSON body that is the right reply,
//! or an SSE body whose events are exactly the reply (and, for `echo_progress`, exactly one
//! progress notification with the call's token before it); anything else fails the run. A
//! call of `echo_progress` correctly answered with plain JSON has lost its notification: a
//! server bug, counted and reported (`lost_progress`) rather than failing the run, since the
//! call itself was answered.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Barrier, mpsc};
use std::time::{Duration, Instant};

use crate::Result;
use crate::http_client::{Connection, Media, for_each_event};
use crate::process::{ServerCommand, ServerProcess};
use crate::run::{Bodies, Call, CallTimes, Era, HttpWorkload, Plan, RunOutcome};
use crate::workload::{self, Reply};

/// The line a server writes to standard error once it listens (mcp-runtime's words; the rmcp
/// peer says the same).
const READY_PREFIX: &str = "mcp: serving Streamable HTTP on http://";

/// How long the server may take to listen, and a response to come.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Where the server listens.
struct Endpoint {
    addr: SocketAddr,
    path: String,
}

/// One run against a server over Streamable HTTP.
pub fn run(server: &ServerCommand, plan: &Plan, workload: HttpWorkload) -> Result<RunOutcome> {
    let spawned = Instant::now();
    let (process, endpoint) = spawn_listening(server, plan.deadline)?;

    let mut first = Client::open(&endpoint, workload)?;
    first.start_conversation()?;
    let cold_start = spawned.elapsed();
    first.finish_handshake()?;
    let mut clients = vec![first];
    for _ in 1..plan.concurrency {
        let mut client = Client::open(&endpoint, workload)?;
        client.start_conversation()?;
        client.finish_handshake()?;
        clients.push(client);
    }

    let mut next_id = workload::INITIALIZE_ID + 1;
    if plan.warmup > 0 {
        call(&mut clients, next_id, plan.warmup)?;
        next_id += plan.warmup as u64;
    }
    let mut calls = CallTimes {
        wall: Duration::ZERO,
        latencies_ns: Vec::with_capacity(plan.calls),
    };
    let mut bodies = Bodies::default();
    let mut rss_kib = Vec::new();
    let mut done = 0;
    for part in plan.parts() {
        let (times, answered) = call(&mut clients, next_id, part)?;
        calls.extend(times);
        bodies.json += answered.json;
        bodies.sse += answered.sse;
        bodies.lost_progress += answered.lost_progress;
        next_id += part as u64;
        done += part;
        if plan.checkpoints > 0 {
            rss_kib.push((done, process.rss_kib()));
        }
    }

    let peak_rss_kib = process.peak_rss_kib();
    let peak_anon_kib = process.peak_anon_kib();
    drop(clients);
    process.stop()?;
    Ok(RunOutcome {
        cold_start,
        calls,
        peak_rss_kib,
        peak_anon_kib,
        bodies,
        rss_kib,
    })
}

/// What idle sessions cost a server: its resident set size (KiB) after `baseline` sessions
/// and after `sessions` more, each opened with `initialize` and `notifications/initialized`
/// one after another on one keep-alive connection, and left idle.
pub fn idle_sessions(
    server: &ServerCommand,
    baseline: usize,
    sessions: usize,
) -> Result<(u64, u64)> {
    let (process, endpoint) = spawn_listening(server, Duration::from_secs(600))?;
    let workload = HttpWorkload {
        era: Era::Session,
        call: Call::Echo,
    };
    let mut client = Client::open(&endpoint, workload)?;
    let mut open = |n: usize| -> Result<()> {
        for _ in 0..n {
            client.start_conversation()?;
            if !client.has_session() {
                return Err("the server opened no session (no Mcp-Session-Id)".into());
            }
            client.finish_handshake()?;
        }
        Ok(())
    };
    open(baseline)?;
    let before = process.rss_kib();
    open(sessions)?;
    let after = process.rss_kib();
    drop(client);
    process.stop()?;
    Ok((before, after))
}

/// `echo` of texts of `bytes` bytes over Streamable HTTP: one session (2025-11-25), one
/// keep-alive connection, one call in flight, [`growth::payload_calls`](crate::growth::payload_calls)
/// calls; each answer checked to carry its text, as JSON or as an SSE event.
pub fn payload(
    name: &'static str,
    server: &ServerCommand,
    bytes: usize,
    rep: usize,
) -> Result<crate::growth::Payload> {
    let calls = crate::growth::payload_calls(bytes);
    let text = crate::growth::payload_text(bytes);
    let (process, endpoint) = spawn_listening(server, Duration::from_secs(600))?;
    let mut client = Client::open(
        &endpoint,
        HttpWorkload {
            era: Era::Session,
            call: Call::Echo,
        },
    )?;
    client.start_conversation()?;
    client.finish_handshake()?;
    let idle_kib = process.rss_kib();
    let mut request = Vec::with_capacity(bytes + 128);
    let headers = client.call_headers.clone();
    let began = Instant::now();
    for id in 1..=calls {
        request.clear();
        request.extend_from_slice(
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":""#)
                .as_bytes(),
        );
        request.extend_from_slice(text.as_bytes());
        request.extend_from_slice(br#""}}}"#);
        client.post(&headers, &request)?;
        if !crate::growth::carries(&client.body, text.as_bytes()) {
            return Err(format!(
                "{name}: a reply to echo over HTTP that does not carry its text: {}",
                workload::lossy(&client.body[..client.body.len().min(512)])
            )
            .into());
        }
    }
    let wall = began.elapsed();
    let peak_kib = process.peak_rss_kib();
    drop(client);
    process.stop()?;
    Ok(crate::growth::Payload::of(
        name,
        rep,
        (bytes, calls),
        wall,
        (idle_kib, peak_kib),
    ))
}

/// Starts the server with `--http 127.0.0.1:0` (killed after `deadline`) and waits until it
/// says where it listens: its address and the endpoint's path.
pub fn listening(
    server: &ServerCommand,
    deadline: Duration,
) -> Result<(ServerProcess, SocketAddr, String)> {
    let (process, endpoint) = spawn_listening(server, deadline)?;
    Ok((process, endpoint.addr, endpoint.path))
}

/// Starts the server with `--http 127.0.0.1:0` (killed after `deadline`) and waits until it
/// says where it listens.
fn spawn_listening(
    server: &ServerCommand,
    deadline: Duration,
) -> Result<(ServerProcess, Endpoint)> {
    let mut command = server.command();
    command
        .args(["--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let process = ServerProcess::spawn(command, deadline)?;
    let endpoint = wait_until_listening(&process, server)?;
    Ok((process, endpoint))
}

/// Reads the server's standard error until it says where it listens, then passes the rest
/// on to ours.
fn wait_until_listening(process: &ServerProcess, server: &ServerCommand) -> Result<Endpoint> {
    let stderr = process.take(|c| c.stderr.take())?;
    let name = server
        .program
        .file_name()
        .map_or_else(|| "server".into(), |n| n.to_string_lossy().into_owned());
    let (ready_tx, ready) = mpsc::channel();
    std::thread::Builder::new()
        .name("server-stderr".into())
        .spawn(move || {
            let mut ready_tx = Some(ready_tx);
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.strip_prefix(READY_PREFIX)
                    && let Some(tx) = ready_tx.take()
                {
                    let _ = tx.send(url.to_owned());
                    continue;
                }
                eprintln!("[{name}] {line}");
            }
        })?;
    let url = ready
        .recv_timeout(TIMEOUT)
        .map_err(|_| "the server did not say where it serves HTTP (is it built with HTTP?)")?;
    let (authority, path) = url.split_at(url.find('/').unwrap_or(url.len()));
    Ok(Endpoint {
        addr: authority
            .parse()
            .map_err(|e| format!("not an address in {url:?}: {e}"))?,
        path: if path.is_empty() {
            "/".into()
        } else {
            path.into()
        },
    })
}

/// One connection and the conversation on it.
struct Client<'a> {
    endpoint: &'a Endpoint,
    workload: HttpWorkload,
    connection: Connection,
    /// The headers of every call: `Host`, the media types, the protocol version, the session
    /// (once there is one), and in the stateless era `Mcp-Method` and `Mcp-Name`.
    call_headers: Vec<u8>,
    /// Whether the server gave the last `initialize` a session id.
    session: bool,
    request: Vec<u8>,
    body: Vec<u8>,
    data: Vec<u8>,
    scratch: Vec<u8>,
}

impl<'a> Client<'a> {
    fn open(endpoint: &'a Endpoint, workload: HttpWorkload) -> Result<Client<'a>> {
        let connection = Connection::open(endpoint.addr, TIMEOUT)?;
        let mut client = Client {
            endpoint,
            workload,
            connection,
            call_headers: Vec::new(),
            session: false,
            request: Vec::with_capacity(512),
            body: Vec::with_capacity(1024),
            data: Vec::with_capacity(512),
            scratch: Vec::with_capacity(128),
        };
        client.call_headers = client.headers(Some("tools/call"), Some(client.tool()), None);
        Ok(client)
    }

    fn tool(&self) -> &'static str {
        match self.workload.call {
            Call::Echo => "echo",
            Call::Progress => "echo_progress",
        }
    }

    fn version(&self) -> &'static str {
        match self.workload.era {
            Era::Session => workload::SESSION_VERSION,
            Era::Stateless => workload::STATELESS_VERSION,
        }
    }

    /// The header lines of a POST.
    fn headers(&self, method: Option<&str>, name: Option<&str>, session: Option<&str>) -> Vec<u8> {
        let mut h = format!(
            "Host: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {}\r\n",
            self.endpoint.addr,
            self.version()
        );
        if let Some(session) = session {
            h.push_str(&format!("Mcp-Session-Id: {session}\r\n"));
        }
        if self.workload.era == Era::Stateless {
            if let Some(method) = method {
                h.push_str(&format!("Mcp-Method: {method}\r\n"));
            }
            if let Some(name) = name {
                h.push_str(&format!("Mcp-Name: {name}\r\n"));
            }
        }
        h.into_bytes()
    }

    /// The first request: `initialize` (keeping the session it opens, if the server opens
    /// one) or `server/discover`.
    fn start_conversation(&mut self) -> Result<()> {
        match self.workload.era {
            Era::Session => {
                let headers = self.headers(None, None, None);
                let request = workload::initialize_request_at(workload::SESSION_VERSION);
                let head = self.post(&headers, request.as_bytes())?;
                let reply = self.only_message(head.media, "initialize")?;
                workload::check_initialize_reply_at(&reply, workload::SESSION_VERSION)?;
                self.session = head.session_id.is_some();
                if let Some(session) = head.session_id {
                    self.call_headers =
                        self.headers(Some("tools/call"), Some(self.tool()), Some(&session));
                }
            }
            Era::Stateless => {
                let headers = self.headers(Some("server/discover"), None, None);
                let head = self.post(&headers, workload::discover_request().as_bytes())?;
                let reply = self.only_message(head.media, "server/discover")?;
                workload::check_discover_reply(&reply)?;
            }
        }
        Ok(())
    }

    /// `notifications/initialized` in the handshake era (202, no body); nothing otherwise.
    fn finish_handshake(&mut self) -> Result<()> {
        if self.workload.era == Era::Session {
            let headers = self.call_headers.clone();
            let head = self.post(&headers, workload::INITIALIZED_NOTIFICATION.as_bytes())?;
            if head.status != 202 {
                return Err(format!(
                    "notifications/initialized answered with {} instead of 202 Accepted: {}",
                    head.status,
                    workload::lossy(&self.body)
                )
                .into());
            }
        }
        Ok(())
    }

    /// POSTs a body, failing on a status other than 200 (and 202 for a notification).
    fn post(&mut self, headers: &[u8], json: &[u8]) -> Result<crate::http_client::Head> {
        let head = self
            .connection
            .post(&self.endpoint.path, headers, json, &mut self.body)?;
        if head.status != 200 && head.status != 202 {
            return Err(format!(
                "HTTP {} to {}: {}",
                head.status,
                workload::lossy(json),
                workload::lossy(&self.body)
            )
            .into());
        }
        Ok(head)
    }

    /// The one JSON-RPC message of a response to `what`, as JSON or as the only event with
    /// data of an SSE body.
    fn only_message(&mut self, media: Media, what: &str) -> Result<Vec<u8>> {
        match media {
            Media::Json => Ok(self.body.clone()),
            Media::EventStream => {
                let mut messages = Vec::new();
                for_each_event(&self.body, &mut self.data, |data| {
                    messages.push(data.to_vec());
                    Ok(())
                })?;
                match <[Vec<u8>; 1]>::try_from(messages) {
                    Ok([message]) => Ok(message),
                    Err(messages) => Err(format!(
                        "{} messages in the SSE response to {what}: {}",
                        messages.len(),
                        workload::lossy(&self.body)
                    )
                    .into()),
                }
            }
            other => Err(format!("a {other:?} response to {what}").into()),
        }
    }

    /// Whether the last `initialize` opened a session.
    fn has_session(&self) -> bool {
        self.session
    }

    /// One call: its latency (request written → response read to its end) and how the
    /// response came, after checking it.
    fn call(&mut self, id: u64) -> Result<(u64, Answered)> {
        let progress = self.workload.call == Call::Progress;
        self.request.clear();
        workload::write_call_request(
            id,
            self.tool(),
            progress,
            self.workload.era == Era::Stateless,
            &mut self.request,
        );
        let sent = Instant::now();
        let head = self.connection.post(
            &self.endpoint.path,
            &self.call_headers,
            &self.request,
            &mut self.body,
        )?;
        let latency = u64::try_from(sent.elapsed().as_nanos()).unwrap_or(u64::MAX);
        if head.status != 200 {
            return Err(format!(
                "call {id}: HTTP {} {}",
                head.status,
                workload::lossy(&self.body)
            )
            .into());
        }
        let answered = match head.media {
            Media::Json => {
                expect_answer(
                    workload::check_echo_reply(&self.body, &mut self.scratch)?,
                    id,
                )?;
                if progress {
                    Answered::JsonWithoutProgress
                } else {
                    Answered::Json
                }
            }
            Media::EventStream => {
                let (mut answers, mut notes) = (0, 0);
                let scratch = &mut self.scratch;
                for_each_event(&self.body, &mut self.data, |data| {
                    match workload::check_echo_reply(data, scratch)? {
                        Reply::Answer(answered) => {
                            expect_answer(Reply::Answer(answered), id)?;
                            answers += 1;
                        }
                        Reply::Progress(token) if token == id && answers == 0 => notes += 1,
                        Reply::Progress(token) => {
                            return Err(format!(
                                "call {id}: a progress notification for token {token}"
                            )
                            .into());
                        }
                        Reply::Other => {}
                    }
                    Ok(())
                })?;
                let expected_notes = usize::from(progress);
                if answers != 1 || notes != expected_notes {
                    return Err(format!(
                        "call {id}: an SSE response with {answers} replies and {notes} progress \
                         notifications (expected 1 and {expected_notes}): {}",
                        workload::lossy(&self.body)
                    )
                    .into());
                }
                Answered::Sse
            }
            other => {
                return Err(format!(
                    "call {id}: a {other:?} response: {}",
                    workload::lossy(&self.body)
                )
                .into());
            }
        };
        Ok((latency, answered))
    }
}

/// How a call was answered (correctly).
enum Answered {
    Json,
    Sse,
    /// With plain JSON, although it asked for progress: the notification was lost.
    JsonWithoutProgress,
}

fn expect_answer(reply: Reply, id: u64) -> Result<()> {
    match reply {
        Reply::Answer(answered) if answered == id => Ok(()),
        Reply::Answer(answered) => {
            Err(format!("the response to call {id} answers call {answered}").into())
        }
        _ => Err(format!("the response to call {id} is not a reply").into()),
    }
}

/// What one connection's thread measured.
struct Share {
    started: Instant,
    finished: Instant,
    latencies_ns: Vec<u64>,
    bodies: Bodies,
}

/// Makes `count` calls with ids from `first_id` on, spread over the clients: each thread
/// takes the next call as soon as its previous one is answered.
fn call(clients: &mut [Client<'_>], first_id: u64, count: usize) -> Result<(CallTimes, Bodies)> {
    let next = AtomicUsize::new(0);
    let start = Barrier::new(clients.len());
    let shares: Vec<Result<Share>> = std::thread::scope(|scope| {
        let threads: Vec<_> = clients
            .iter_mut()
            .map(|client| {
                let (next, start) = (&next, &start);
                scope.spawn(move || -> Result<Share> {
                    let mut latencies_ns = Vec::with_capacity(count / 8 + 1);
                    let mut bodies = Bodies::default();
                    start.wait();
                    let started = Instant::now();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= count {
                            break;
                        }
                        match client.call(first_id + i as u64) {
                            Ok((latency, answered)) => {
                                latencies_ns.push(latency);
                                match answered {
                                    Answered::Json => bodies.json += 1,
                                    Answered::Sse => bodies.sse += 1,
                                    Answered::JsonWithoutProgress => {
                                        bodies.json += 1;
                                        bodies.lost_progress += 1;
                                    }
                                }
                            }
                            Err(e) => {
                                // The others stop at their next call.
                                next.store(count, Ordering::Relaxed);
                                return Err(e);
                            }
                        }
                    }
                    Ok(Share {
                        started,
                        finished: Instant::now(),
                        latencies_ns,
                        bodies,
                    })
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| {
                t.join()
                    .unwrap_or_else(|_| Err("a connection's thread panicked".into()))
            })
            .collect()
    });
    let mut started: Option<Instant> = None;
    let mut finished: Option<Instant> = None;
    let mut latencies_ns = Vec::with_capacity(count);
    let mut bodies = Bodies::default();
    for share in shares {
        let share = share?;
        started = Some(started.map_or(share.started, |s| s.min(share.started)));
        finished = Some(finished.map_or(share.finished, |f| f.max(share.finished)));
        latencies_ns.extend(share.latencies_ns);
        bodies.json += share.bodies.json;
        bodies.sse += share.bodies.sse;
        bodies.lost_progress += share.bodies.lost_progress;
    }
    let wall = match (started, finished) {
        (Some(s), Some(f)) => f - s,
        _ => Duration::ZERO,
    };
    Ok((CallTimes { wall, latencies_ns }, bodies))
}
