//! Cost as the work grows (`mcp-load growth`): a catalogue of 1,000 tools (start-up, a whole
//! `tools/list` over every page, memory), `echo` payloads of 1 KiB, 64 KiB and 1 MiB (MB/s
//! and how far peak memory grows past the payload), and 1,000 clients subscribed to one
//! resource (from the change to the last `notifications/resources/updated`).
//!
//! Each is measured over stdio with its own small client (one request in flight; the load
//! of `mcp-load run` is about calls per second, these rows about size), except the fan-out,
//! which needs Streamable HTTP sessions and their GET streams, and the payloads once more
//! over Streamable HTTP (`http::payload`).

use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{ChildStdin, ChildStdout};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::Result;
use crate::process::{ServerCommand, ServerProcess, describe_exit};
use crate::workload;

/// How long one server may take over everything one row asks of it.
const DEADLINE: Duration = Duration::from_secs(600);

/// A server over stdio, spoken to one request at a time.
struct StdioPeer {
    process: ServerProcess,
    input: BufWriter<ChildStdin>,
    output: BufReader<ChildStdout>,
    line: Vec<u8>,
    next_id: u64,
}

impl StdioPeer {
    /// Starts the server and completes the handshake; the time until `initialize` was
    /// answered is its start-up.
    fn start(server: &ServerCommand) -> Result<(StdioPeer, Duration)> {
        let spawned = Instant::now();
        let process = ServerProcess::spawn(server.stdio_command(), DEADLINE)?;
        let mut peer = StdioPeer {
            input: BufWriter::with_capacity(1 << 20, process.take(|c| c.stdin.take())?),
            output: BufReader::with_capacity(1 << 20, process.take(|c| c.stdout.take())?),
            process,
            line: Vec::new(),
            next_id: workload::INITIALIZE_ID + 1,
        };
        peer.send(workload::initialize_request().as_bytes())?;
        peer.read_line()?;
        let started = spawned.elapsed();
        workload::check_initialize_reply(&peer.line)?;
        peer.send(workload::INITIALIZED_NOTIFICATION.as_bytes())?;
        Ok((peer, started))
    }

    fn send(&mut self, line: &[u8]) -> Result<()> {
        self.input.write_all(line)?;
        self.input.flush()?;
        Ok(())
    }

    fn read_line(&mut self) -> Result<()> {
        self.line.clear();
        if self.output.read_until(b'\n', &mut self.line)? == 0 {
            return Err("the server closed its output".into());
        }
        Ok(())
    }

    /// Sends a request (`params` as JSON text) and reads its reply into `self.line`.
    fn request(&mut self, method: &str, params: &str) -> Result<&[u8]> {
        let id = self.next_id;
        self.next_id += 1;
        let mut out = Vec::with_capacity(params.len() + 64);
        write!(
            out,
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
        )?;
        out.push(b'\n');
        self.send(&out)?;
        self.read_line()?;
        Ok(&self.line)
    }

    fn stop(self) -> Result<u64> {
        let StdioPeer { process, input, .. } = self;
        let peak = process.peak_rss_kib();
        drop(input);
        let status = process.wait(Duration::from_secs(10))?;
        if let Some(problem) = describe_exit(status) {
            return Err(format!("{problem} at the end of its input").into());
        }
        Ok(peak)
    }
}

/// One measurement of a catalogue's server.
pub struct Catalogue {
    pub framework: &'static str,
    pub rep: usize,
    /// From spawning to the answer to `initialize`.
    pub start: Duration,
    /// The median of the whole listings: every page, one request after another.
    pub list: Duration,
    pub pages: usize,
    /// Resident set size once it has listed.
    pub rss_kib: u64,
}

/// Starts a catalogue's server, lists its tools `listings` times, and checks every tool was
/// listed once.
pub fn catalogue(
    framework: &'static str,
    server: &ServerCommand,
    tools: usize,
    listings: usize,
    rep: usize,
) -> Result<Catalogue> {
    let (mut peer, start) = StdioPeer::start(server)?;
    let mut times = Vec::with_capacity(listings);
    let mut pages = 0;
    for _ in 0..listings.max(1) {
        // Only the exchanges are timed: reading a page is the driver's work, not the server's.
        let mut listing = Duration::ZERO;
        let mut cursor: Option<String> = None;
        let mut listed = 0;
        pages = 0;
        loop {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }).to_string(),
                None => "{}".to_owned(),
            };
            let began = Instant::now();
            peer.request("tools/list", &params)?;
            listing += began.elapsed();
            let reply: Value = serde_json::from_slice(&peer.line)?;
            let result = reply
                .get("result")
                .ok_or_else(|| format!("tools/list failed: {reply}"))?;
            listed += result["tools"].as_array().map_or(0, Vec::len);
            pages += 1;
            match result.get("nextCursor").and_then(Value::as_str) {
                Some(next) => cursor = Some(next.to_owned()),
                None => break,
            }
        }
        times.push(listing);
        if listed != tools {
            return Err(format!("{framework}: listed {listed} tools of {tools}").into());
        }
    }
    times.sort();
    let rss_kib = peer.process.rss_kib();
    peer.stop()?;
    Ok(Catalogue {
        framework,
        rep,
        start,
        list: times[times.len() / 2],
        pages,
        rss_kib,
    })
}

/// One measurement of `echo` with large texts.
pub struct Payload {
    pub server: &'static str,
    pub rep: usize,
    pub bytes: usize,
    pub calls: usize,
    /// Text echoed per second, counted once.
    pub mb_per_s: f64,
    /// Resident set size after the handshake, and its peak over the calls.
    pub idle_kib: u64,
    pub peak_kib: u64,
}

impl Payload {
    /// `calls` texts of `bytes` bytes echoed in `wall`, with the resident set size after the
    /// handshake and at its peak.
    pub fn of(
        server: &'static str,
        rep: usize,
        (bytes, calls): (usize, usize),
        wall: Duration,
        (idle_kib, peak_kib): (u64, u64),
    ) -> Payload {
        Payload {
            server,
            rep,
            bytes,
            calls,
            mb_per_s: (calls * bytes) as f64 / wall.as_secs_f64() / 1e6,
            idle_kib,
            peak_kib,
        }
    }
}

/// How many calls carry a payload of `bytes`: about 64 MiB in all, from 16 to 5,000 calls.
pub fn payload_calls(bytes: usize) -> usize {
    ((64 << 20) / bytes).clamp(16, 5_000)
}

/// `calls` calls of `echo` with a text of `bytes` bytes, each reply checked to carry it.
pub fn payload(
    name: &'static str,
    server: &ServerCommand,
    bytes: usize,
    rep: usize,
) -> Result<Payload> {
    let calls = payload_calls(bytes);
    let text = payload_text(bytes);
    let params = format!(r#"{{"name":"echo","arguments":{{"text":"{text}"}}}}"#);
    let (mut peer, _) = StdioPeer::start(server)?;
    let idle_kib = peer.process.rss_kib();
    let began = Instant::now();
    for _ in 0..calls {
        let reply = peer.request("tools/call", &params)?;
        if !carries(reply, text.as_bytes()) {
            return Err(format!(
                "{name}: a reply to echo that does not carry its text: {}",
                workload::lossy(&reply[..reply.len().min(512)])
            )
            .into());
        }
    }
    let wall = began.elapsed();
    let peak_kib = peer.stop()?;
    Ok(Payload::of(
        name,
        rep,
        (bytes, calls),
        wall,
        (idle_kib, peak_kib),
    ))
}

/// Whether `reply` carries an `echo` result of `text` (the start of a JSON body or of an SSE
/// body's one event): a result, longer than the text, whose first few hundred bytes hold the
/// text's start. Checked so, the check costs the driver the same small time whatever the
/// size.
pub fn carries(reply: &[u8], text: &[u8]) -> bool {
    let head = &reply[..reply.len().min(512)];
    reply.len() > text.len() && find(head, b"\"result\"") && find(head, &text[..text.len().min(64)])
}

/// The text of `bytes` bytes the payload rows echo.
pub fn payload_text(bytes: usize) -> String {
    (0..bytes)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect()
}

fn find(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// One change delivered to every subscriber.
pub struct FanOut {
    pub round: usize,
    /// From sending `touch` to its answer, to the first and to the last notification.
    pub answered: Duration,
    pub first: Duration,
    pub last: Duration,
}

/// Opens `subscribers` sessions on a Streamable HTTP server of `bench://watched` and
/// `touch` (`session-server`), each subscribed to the resource and listening on its GET stream, then calls
/// `touch` `rounds` times, each time waiting until every stream has heard of it.
pub fn fan_out(server: &ServerCommand, subscribers: usize, rounds: usize) -> Result<Vec<FanOut>> {
    let (process, addr, path) = crate::http::listening(server, DEADLINE)?;
    let (heard_tx, heard) = mpsc::channel::<Result<Instant>>();
    let mut listeners = Vec::with_capacity(subscribers);
    for _ in 0..subscribers {
        let session = open_session(addr, &path)?;
        post(
            addr,
            &path,
            Some(&session),
            &json!({
            "jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
            "params": {"uri": "bench://watched"}}),
        )?;
        let stream = get_stream(addr, &path, &session)?;
        let heard_tx = heard_tx.clone();
        listeners.push(
            std::thread::Builder::new()
                .name("subscriber".into())
                .stack_size(64 * 1024)
                .spawn(move || listen(stream, rounds, &heard_tx))?,
        );
    }
    drop(heard_tx);
    let caller = open_session(addr, &path)?;
    let mut results = Vec::with_capacity(rounds);
    for round in 1..=rounds {
        let sent = Instant::now();
        let reply = post(
            addr,
            &path,
            Some(&caller),
            &json!({
            "jsonrpc": "2.0", "id": 10 + round, "method": "tools/call",
            "params": {"name": "touch", "arguments": {}}}),
        )?;
        let answered = sent.elapsed();
        if !reply.contains("revision") {
            return Err(format!("touch failed: {reply}").into());
        }
        let mut first = None;
        let mut last = sent;
        for _ in 0..subscribers {
            let at = heard
                .recv_timeout(Duration::from_secs(60))
                .map_err(|_| "a subscriber heard nothing within a minute")??;
            first = Some(first.map_or(at, |f: Instant| f.min(at)));
            last = last.max(at);
        }
        results.push(FanOut {
            round,
            answered,
            first: first.unwrap_or(sent).saturating_duration_since(sent),
            last: last.saturating_duration_since(sent),
        });
    }
    let stopped = process.stop();
    for listener in listeners {
        let _ = listener.join();
    }
    stopped.map(|()| results)
}

/// Reads a GET stream, reporting when each of `rounds` resource updates arrives.
fn listen(mut stream: TcpStream, rounds: usize, heard: &mpsc::Sender<Result<Instant>>) {
    const NEEDLE: &[u8] = b"notifications/resources/updated";
    let mut pending = Vec::new();
    let mut buffer = vec![0u8; 4096];
    let mut seen = 0;
    while seen < rounds {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => {
                let _ = heard.send(Err("a GET stream ended early".into()));
                return;
            }
            Ok(n) => {
                let at = Instant::now();
                pending.extend_from_slice(&buffer[..n]);
                while let Some(i) = pending.windows(NEEDLE.len()).position(|w| w == NEEDLE) {
                    pending.drain(..i + NEEDLE.len());
                    seen += 1;
                    let _ = heard.send(Ok(at));
                }
                // Keep only what could be the start of the next one.
                let keep = pending.len().min(NEEDLE.len());
                pending.drain(..pending.len() - keep);
            }
        }
    }
}

/// `initialize` and `notifications/initialized` on a new session; its id.
fn open_session(addr: SocketAddr, path: &str) -> Result<String> {
    let (head, body) = exchange(
        addr,
        path,
        None,
        &json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": workload::SESSION_VERSION, "capabilities": {},
            "clientInfo": {"name": "mcp-load", "version": env!("CARGO_PKG_VERSION")}}}),
    )?;
    let session = header(&head, "mcp-session-id")
        .ok_or_else(|| format!("initialize opened no session: {head}{body}"))?;
    exchange(
        addr,
        path,
        Some(&session),
        &json!({
        "jsonrpc": "2.0", "method": "notifications/initialized"}),
    )?;
    Ok(session)
}

/// POSTs one request on a connection of its own; the body of the answer.
fn post(addr: SocketAddr, path: &str, session: Option<&str>, message: &Value) -> Result<String> {
    let (head, body) = exchange(addr, path, session, message)?;
    if !head.starts_with("HTTP/1.1 200") {
        return Err(format!("{message}: {head}{body}").into());
    }
    Ok(body)
}

fn request_head(addr: SocketAddr, method: &str, path: &str, session: Option<&str>) -> String {
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Accept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: {}\r\n",
        workload::SESSION_VERSION
    );
    if let Some(session) = session {
        head.push_str(&format!("Mcp-Session-Id: {session}\r\n"));
    }
    head
}

/// One request and its whole answer (the connection closes after it).
fn exchange(
    addr: SocketAddr,
    path: &str,
    session: Option<&str>,
    message: &Value,
) -> Result<(String, String)> {
    let body = message.to_string();
    let mut stream = connect(addr)?;
    let mut request = request_head(addr, "POST", path, session);
    request.push_str(&format!(
        "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    ));
    stream.write_all(request.as_bytes())?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    Ok((format!("{head}\r\n"), body.to_owned()))
}

/// Opens a session's GET stream, its response head read.
fn get_stream(addr: SocketAddr, path: &str, session: &str) -> Result<TcpStream> {
    let mut stream = connect(addr)?;
    let mut request = request_head(addr, "GET", path, Some(session));
    request.push_str("\r\n");
    stream.write_all(request.as_bytes())?;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte)? == 0 {
            return Err("the GET stream closed before its head".into());
        }
        head.push(byte[0]);
    }
    if !head.starts_with(b"HTTP/1.1 200") {
        return Err(format!("GET: {}", String::from_utf8_lossy(&head)).into());
    }
    stream.set_read_timeout(Some(Duration::from_secs(120)))?;
    Ok(stream)
}

fn connect(addr: SocketAddr) -> Result<TcpStream> {
    let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(30))?;
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    Ok(stream)
}

fn header(head: &str, name: &str) -> Option<String> {
    head.lines().find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.trim()
            .eq_ignore_ascii_case(name)
            .then(|| v.trim().to_owned())
    })
}
