//! A small HTTP/1.1 client over `std::net::TcpStream`, able to send anything a test needs
//! (any method, any header, a bad `Host` or `Origin`, any body) and to read a response with
//! `Content-Length` or chunked framing, or an SSE response event by event; and a server
//! process serving Streamable HTTP on a port of its choosing.
//!
//! Every read has a deadline, and a read that times out loses nothing: bytes are kept in a
//! buffer and parsed only once a whole line, chunk or event is there.

use std::ffi::OsStr;
use std::fmt;
use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::TIMEOUT;

/// The line a server writes to standard error when it is ready.
const READY_PREFIX: &str = "mcp: serving Streamable HTTP on http://";

/// A server process serving HTTP on a loopback port it picked itself (`--http 127.0.0.1:0`).
pub struct HttpServer {
    child: Child,
    addr: SocketAddr,
    path: String,
}

impl HttpServer {
    /// Starts `program --http 127.0.0.1:0` and waits for the line naming its address.
    pub fn spawn(program: &Path, env: &[(&str, &str)]) -> HttpServer {
        HttpServer::spawn_with_args(program, &[], env)
    }

    /// Starts `program --http 127.0.0.1:0 ARGS…` and waits for the line naming its address.
    pub fn spawn_with_args(program: &Path, args: &[&OsStr], env: &[(&str, &str)]) -> HttpServer {
        HttpServer::spawn_on(program, "127.0.0.1:0", args, env)
    }

    /// Starts `program --http ADDR ARGS…` and waits for the line naming its address.
    pub fn spawn_on(
        program: &Path,
        addr: &str,
        args: &[&OsStr],
        env: &[(&str, &str)],
    ) -> HttpServer {
        let mut child = Command::new(program)
            .args(["--http", addr])
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::inherit())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
        let stderr = child.stderr.take().expect("piped stderr");
        let (ready_tx, ready) = mpsc::channel();
        // The server's standard error goes on to the test's, which shows it for failed tests.
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.strip_prefix(READY_PREFIX) {
                    let _ = ready_tx.send(url.to_owned());
                }
                eprintln!("[server] {line}");
            }
        });
        let url = ready.recv_timeout(TIMEOUT).unwrap_or_else(|_| {
            let _ = child.kill();
            panic!(
                "{} did not say where it serves HTTP within {TIMEOUT:?}",
                program.display()
            )
        });
        let (authority, path) = url.split_at(url.find('/').unwrap_or(url.len()));
        HttpServer {
            child,
            addr: authority
                .parse()
                .unwrap_or_else(|e| panic!("not an address in {url:?}: {e}")),
            path: path.to_owned(),
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Where the server listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The endpoint's path, as announced (`/mcp`).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// `http://127.0.0.1:PORT` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// A request to this server.
    pub fn request(&self, method: &str, target: &str) -> Request {
        Request::new(self.addr, method, target)
    }

    /// Sends SIGTERM, as a service manager does to stop a service.
    pub fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -TERM failed");
    }

    /// Waits for the process to exit, at most [`TIMEOUT`].
    pub fn wait(&mut self) -> ExitStatus {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for the server") {
                return status;
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP/1.1 request being put together. `Host` is the server's address unless set, and
/// `Content-Length` is added for a body.
#[derive(Clone)]
pub struct Request {
    addr: SocketAddr,
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    /// `method target` to the server at `addr`.
    pub fn new(addr: SocketAddr, method: &str, target: &str) -> Request {
        Request {
            addr,
            method: method.to_owned(),
            target: target.to_owned(),
            headers: vec![("Host".into(), addr.to_string())],
            body: Vec::new(),
        }
    }

    /// Sets a header, replacing any of the same name.
    pub fn header(mut self, name: &str, value: &str) -> Request {
        self = self.without_header(name);
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Removes a header (also the default `Host`).
    pub fn without_header(mut self, name: &str) -> Request {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self
    }

    /// Sets the body, as given.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Request {
        self.body = body.into();
        self
    }

    /// Sets a JSON body and `Content-Type: application/json`.
    pub fn json(self, body: &Value) -> Request {
        self.header("Content-Type", "application/json")
            .body(body.to_string())
    }

    /// The request as it goes on the wire.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut head = format!("{} {} HTTP/1.1\r\n", self.method, self.target);
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        let has_length = self
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("content-length"));
        if !has_length && (!self.body.is_empty() || self.method == "POST") {
            head.push_str(&format!("Content-Length: {}\r\n", self.body.len()));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(&self.body);
        bytes
    }

    /// Connects, sends the request, and reads the status line and headers.
    pub fn send(self) -> Response {
        let deadline = Instant::now() + TIMEOUT;
        let mut tcp = TcpStream::connect_timeout(&self.addr, TIMEOUT)
            .unwrap_or_else(|e| panic!("connect to {}: {e}", self.addr));
        tcp.set_nodelay(true).expect("set TCP_NODELAY");
        tcp.write_all(&self.to_bytes()).expect("send the request");
        let mut conn = Connection {
            tcp,
            raw: Vec::new(),
            eof: false,
        };
        let head = conn
            .read_head(deadline)
            .unwrap_or_else(|| panic!("no response to {} {}", self.method, self.target));
        let mut lines = head.split("\r\n");
        let status_line = lines.next().unwrap_or_default();
        let status = status_line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("not an HTTP status line: {status_line:?}"));
        let headers: Vec<(String, String)> = lines
            .filter_map(|line| line.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        let find = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        let framing =
            if self.method == "HEAD" || status / 100 == 1 || status == 204 || status == 304 {
                Framing::Done
            } else if find("transfer-encoding").is_some_and(|t| t.eq_ignore_ascii_case("chunked")) {
                Framing::Chunked(Chunk::Size)
            } else if let Some(length) = find("content-length") {
                Framing::Length(length.parse().expect("a numeric Content-Length"))
            } else {
                Framing::UntilClose
            };
        Response {
            status,
            headers,
            body: Body { conn, framing },
        }
    }
}

/// A response whose status line and headers have been read; its body is read on demand.
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The headers, names in lower case, in order.
    pub headers: Vec<(String, String)>,
    body: Body,
}

impl fmt::Debug for Response {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Response")
            .field("status", &self.status)
            .field("headers", &self.headers)
            .finish_non_exhaustive()
    }
}

impl Response {
    /// The value of a header (the first, when repeated), by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The media type of `Content-Type`, without parameters.
    pub fn media_type(&self) -> Option<&str> {
        self.header("content-type")
            .map(|c| c.split(';').next().unwrap_or("").trim())
    }

    /// The whole body; fails the test when it does not end within [`TIMEOUT`].
    pub fn bytes(mut self) -> Vec<u8> {
        let deadline = Instant::now() + TIMEOUT;
        let mut out = Vec::new();
        loop {
            match self.body.pull(&mut out, deadline) {
                Ok(true) => {}
                Ok(false) => return out,
                Err(TimedOut) => panic!("the body did not end within {TIMEOUT:?}"),
            }
        }
    }

    /// The whole body as text.
    pub fn text(self) -> String {
        String::from_utf8(self.bytes()).expect("a UTF-8 body")
    }

    /// The whole body as JSON.
    pub fn json(self) -> Value {
        let text = self.text();
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("a JSON body ({e}): {text:?}"))
    }

    /// The body as a stream of Server-Sent Events.
    pub fn events(self) -> EventStream {
        EventStream {
            body: self.body,
            decoded: Vec::new(),
        }
    }
}

/// One Server-Sent Event: the fields of one block ended by a blank line. Blocks without
/// `data` (a bare `retry`) are events here too, so tests can see them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// `id`, when present.
    pub id: Option<String>,
    /// `event`, when present.
    pub event: Option<String>,
    /// `retry`, in milliseconds, when present.
    pub retry: Option<u64>,
    /// The `data` lines joined with newlines; `None` when the block has none.
    pub data: Option<String>,
}

impl SseEvent {
    /// The data as JSON; fails the test when it is not.
    pub fn json(&self) -> Value {
        let data = self
            .data
            .as_deref()
            .unwrap_or_else(|| panic!("an event without data: {self:?}"));
        serde_json::from_str(data)
            .unwrap_or_else(|e| panic!("event data is not JSON ({e}): {self:?}"))
    }

    fn parse(block: &str) -> SseEvent {
        let mut event = SseEvent::default();
        for line in block.lines() {
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "id" => event.id = Some(value.to_owned()),
                "event" => event.event = Some(value.to_owned()),
                "retry" => event.retry = value.parse().ok(),
                "data" => {
                    let data = event.data.get_or_insert_with(String::new);
                    if !data.is_empty() {
                        data.push('\n');
                    }
                    data.push_str(value);
                }
                _ => {}
            }
        }
        event
    }
}

/// What waiting for the next event found.
#[derive(Debug)]
pub enum Next {
    /// An event.
    Event(SseEvent),
    /// The server ended the stream.
    End,
    /// Nothing came within the time given.
    TimedOut,
}

/// An SSE response read event by event. Dropping it closes the connection.
pub struct EventStream {
    body: Body,
    decoded: Vec<u8>,
}

impl EventStream {
    /// The next event, or the end of the stream, waiting at most `timeout`.
    pub fn next_within(&mut self, timeout: Duration) -> Next {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(event) = self.take_event() {
                return Next::Event(event);
            }
            match self.body.pull(&mut self.decoded, deadline) {
                Ok(true) => {}
                Ok(false) => {
                    return match self.take_event() {
                        Some(event) => Next::Event(event),
                        None => Next::End,
                    };
                }
                Err(TimedOut) => return Next::TimedOut,
            }
        }
    }

    /// The next event, or `None` at the end of the stream; fails the test when nothing comes
    /// within [`TIMEOUT`].
    pub fn next_event(&mut self) -> Option<SseEvent> {
        match self.next_within(TIMEOUT) {
            Next::Event(event) => Some(event),
            Next::End => None,
            Next::TimedOut => panic!("no event and no end of stream within {TIMEOUT:?}"),
        }
    }

    /// The next event; fails the test at the end of the stream or after [`TIMEOUT`].
    pub fn expect_event(&mut self) -> SseEvent {
        self.next_event()
            .expect("the stream ended before the event expected")
    }

    /// Every event until the server ends the stream.
    pub fn until_end(&mut self) -> Vec<SseEvent> {
        std::iter::from_fn(|| self.next_event()).collect()
    }

    /// Closes the connection from this side, in the middle of the stream.
    pub fn disconnect(self) {
        let _ = self.body.conn.tcp.shutdown(Shutdown::Both);
    }

    /// One complete event block from the decoded bytes, if there is one.
    fn take_event(&mut self) -> Option<SseEvent> {
        loop {
            let text = std::str::from_utf8(&self.decoded).ok();
            let (end, next) = match text {
                Some(text) => {
                    let lf = text.find("\n\n").map(|i| (i, i + 2));
                    let crlf = text.find("\r\n\r\n").map(|i| (i, i + 4));
                    match (lf, crlf) {
                        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
                        (a, b) => a.or(b),
                    }?
                }
                // An event may be split inside a multi-byte character: wait for the rest.
                None => {
                    let i = self.decoded.windows(2).position(|w| w == b"\n\n")?;
                    (i, i + 2)
                }
            };
            let block = String::from_utf8_lossy(&self.decoded[..end]).into_owned();
            self.decoded.drain(..next);
            if block.trim().is_empty() {
                continue;
            }
            return Some(SseEvent::parse(&block));
        }
    }
}

struct TimedOut;

/// A TCP connection and the bytes read from it but not yet used.
struct Connection {
    tcp: TcpStream,
    raw: Vec<u8>,
    eof: bool,
}

impl Connection {
    /// Reads more bytes; a connection the server closed or reset reads as the end.
    fn fill(&mut self, deadline: Instant) -> Result<(), TimedOut> {
        if self.eof {
            return Ok(());
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(TimedOut);
        }
        self.tcp
            .set_read_timeout(Some(left))
            .expect("set a read timeout");
        let mut buf = [0u8; 8192];
        match self.tcp.read(&mut buf) {
            Ok(0) => self.eof = true,
            Ok(n) => self.raw.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(TimedOut);
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => self.eof = true,
        }
        Ok(())
    }

    /// Takes one line ending in CRLF (without it), reading as needed; `None` at the end.
    fn line(&mut self, deadline: Instant) -> Result<Option<String>, TimedOut> {
        loop {
            if let Some(i) = self.raw.windows(2).position(|w| w == b"\r\n") {
                let line = String::from_utf8_lossy(&self.raw[..i]).into_owned();
                self.raw.drain(..i + 2);
                return Ok(Some(line));
            }
            if self.eof {
                return Ok(None);
            }
            self.fill(deadline)?;
        }
    }

    /// The status line and headers, up to the blank line.
    fn read_head(&mut self, deadline: Instant) -> Option<String> {
        loop {
            if let Some(i) = self.raw.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&self.raw[..i]).into_owned();
                self.raw.drain(..i + 4);
                return Some(head);
            }
            if self.eof {
                return None;
            }
            if self.fill(deadline).is_err() {
                panic!("no response head within {TIMEOUT:?}");
            }
        }
    }
}

/// How the body is framed, and where reading it has got to.
enum Framing {
    Length(usize),
    Chunked(Chunk),
    UntilClose,
    Done,
}

enum Chunk {
    /// Expecting a chunk-size line.
    Size,
    /// Inside a chunk, with this many bytes left.
    Data(usize),
    /// Expecting the CRLF after a chunk.
    DataEnd,
    /// After the last chunk, expecting trailers and a blank line.
    Trailers,
}

struct Body {
    conn: Connection,
    framing: Framing,
}

impl Body {
    /// Appends decoded body bytes to `out`: `Ok(true)` when some were added, `Ok(false)` at
    /// the end of the body.
    fn pull(&mut self, out: &mut Vec<u8>, deadline: Instant) -> Result<bool, TimedOut> {
        loop {
            match &mut self.framing {
                Framing::Done => return Ok(false),
                Framing::Length(0) => self.framing = Framing::Done,
                Framing::Length(left) | Framing::Chunked(Chunk::Data(left)) => {
                    if self.conn.raw.is_empty() {
                        if self.conn.eof {
                            // The server went away in the middle of the body.
                            self.framing = Framing::Done;
                            continue;
                        }
                        self.conn.fill(deadline)?;
                        continue;
                    }
                    let n = (*left).min(self.conn.raw.len());
                    out.extend(self.conn.raw.drain(..n));
                    *left -= n;
                    if *left == 0 && matches!(self.framing, Framing::Chunked(_)) {
                        self.framing = Framing::Chunked(Chunk::DataEnd);
                    }
                    return Ok(true);
                }
                Framing::UntilClose => {
                    if !self.conn.raw.is_empty() {
                        out.append(&mut self.conn.raw);
                        return Ok(true);
                    }
                    if self.conn.eof {
                        self.framing = Framing::Done;
                        continue;
                    }
                    self.conn.fill(deadline)?;
                }
                Framing::Chunked(Chunk::Size) => {
                    let Some(line) = self.conn.line(deadline)? else {
                        self.framing = Framing::Done;
                        continue;
                    };
                    let size = line.split(';').next().unwrap_or("").trim();
                    let size = usize::from_str_radix(size, 16)
                        .unwrap_or_else(|_| panic!("not a chunk size: {line:?}"));
                    self.framing = Framing::Chunked(if size == 0 {
                        Chunk::Trailers
                    } else {
                        Chunk::Data(size)
                    });
                }
                Framing::Chunked(Chunk::DataEnd) => {
                    let line = self.conn.line(deadline)?;
                    assert!(
                        line.as_deref().is_none_or(str::is_empty),
                        "a chunk not followed by CRLF: {line:?}"
                    );
                    self.framing = Framing::Chunked(Chunk::Size);
                }
                Framing::Chunked(Chunk::Trailers) => match self.conn.line(deadline)? {
                    Some(line) if !line.is_empty() => {}
                    _ => self.framing = Framing::Done,
                },
            }
        }
    }
}

/// A handshake-era session on a server: opened with `initialize` (and
/// `notifications/initialized`), and named on every later request with its id, its
/// revision and, when it has one, its caller's bearer token.
pub struct Session<'a> {
    server: &'a HttpServer,
    /// The `Mcp-Session-Id` the server issued.
    pub id: String,
    version: String,
    token: Option<String>,
}

impl<'a> Session<'a> {
    /// Opens a session at `version`, with no client capabilities and no token.
    pub fn open(server: &'a HttpServer, version: &str) -> Session<'a> {
        Session::open_with(server, version, serde_json::json!({}), None)
    }

    /// Opens a session at `version` with these client capabilities, as the caller of
    /// `token`; fails the test unless the server agrees to the revision.
    pub fn open_with(
        server: &'a HttpServer,
        version: &str,
        capabilities: Value,
        token: Option<&str>,
    ) -> Session<'a> {
        let initialize = serde_json::json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": capabilities,
                "clientInfo": {"name": "http-e2e", "version": "1.0.0"},
            },
        });
        let response = bearer(post(server, &initialize), token).send();
        let id = response
            .header("mcp-session-id")
            .unwrap_or_else(|| panic!("initialize returns a session id: {response:?}"))
            .to_owned();
        let init = json_body(response);
        assert_eq!(init["result"]["protocolVersion"], version, "{init}");
        let session = Session {
            server,
            id,
            version: version.to_owned(),
            token: token.map(String::from),
        };
        let initialized = session
            .post(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .send();
        assert_eq!(initialized.status, 202, "{initialized:?}");
        assert!(initialized.bytes().is_empty(), "a 202 carries no body");
        session
    }

    /// The same session id, presented with another token (or none).
    pub fn as_caller(&self, token: Option<&str>) -> Session<'a> {
        Session {
            server: self.server,
            id: self.id.clone(),
            version: self.version.clone(),
            token: token.map(String::from),
        }
    }

    /// Adds the session's headers to a request.
    pub fn headers(&self, request: Request) -> Request {
        bearer(
            request
                .header("Mcp-Session-Id", &self.id)
                .header("MCP-Protocol-Version", &self.version),
            self.token.as_deref(),
        )
    }

    /// A `POST` of `message` to the endpoint, in this session.
    pub fn post(&self, message: &Value) -> Request {
        self.headers(post(self.server, message))
    }

    /// `GET` of the endpoint: the session's own stream, or a resumed one.
    pub fn get(&self) -> Request {
        self.headers(self.server.request("GET", "/mcp"))
            .header("Accept", "text/event-stream")
    }

    /// A request answered with JSON: its response.
    pub fn request(&self, id: i64, method: &str, params: Value) -> Value {
        let message = serde_json::json!({
            "jsonrpc": "2.0", "id": id, "method": method, "params": params,
        });
        json_body(self.post(&message).send())
    }

    /// A tool call answered with JSON: its response.
    pub fn call(&self, id: i64, name: &str, arguments: Value) -> Value {
        self.request(
            id,
            "tools/call",
            serde_json::json!({"name": name, "arguments": arguments}),
        )
    }
}

/// A `POST` of `message` to the endpoint, accepting JSON or an SSE stream.
fn post(server: &HttpServer, message: &Value) -> Request {
    server
        .request("POST", "/mcp")
        .header("Accept", "application/json, text/event-stream")
        .json(message)
}

fn bearer(request: Request, token: Option<&str>) -> Request {
    match token {
        Some(token) => request.header("Authorization", &format!("Bearer {token}")),
        None => request,
    }
}

/// The JSON body of a `200 application/json` response.
pub fn json_body(response: Response) -> Value {
    assert_eq!(response.status, 200, "{response:?}");
    assert_eq!(
        response.media_type(),
        Some("application/json"),
        "{response:?}"
    );
    response.json()
}

/// The SSE body of a `200 text/event-stream` response.
pub fn event_stream(response: Response) -> EventStream {
    assert_eq!(response.status, 200, "{response:?}");
    assert_eq!(
        response.media_type(),
        Some("text/event-stream"),
        "{response:?}"
    );
    response.events()
}

/// The next event that carries a message, skipping priming events.
pub fn next_message(events: &mut EventStream) -> Value {
    loop {
        let event = events.expect_event();
        if event.data.as_deref().is_some_and(|d| !d.is_empty()) {
            return event.json();
        }
    }
}

/// `text` percent-encoded for a query string or a form: everything but letters, digits and
/// `-._`.
pub fn url_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'.' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
