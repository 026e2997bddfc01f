//! Hostile input: the corpus in `tests/hostile/cases.jsonl` (malformed, oversized, deeply
//! nested, mistyped and out-of-order messages) sent to the `catalogue` server over stdio and
//! over Streamable HTTP, at the revisions each case names. For every case the answer must be
//! the one JSON-RPC 2.0 and MCP call for — the error code and id, or nothing at all — and a
//! valid call sent right after it must still be served by the same, living process.
//!
//! Every case runs and every failure is listed before the test fails; cases whose current
//! behaviour is known to be wrong say so in their `bug` field and are listed as such.
//!
//! The format of a case (one JSON object a line; lines starting with `//` are comments):
//!
//! - `name`, `category`; `eras` (default: 2025-11-25 and 2026-07-28); `transports` (default
//!   both); `env` for the server; `fresh`: a server of its own, with no handshake;
//! - `send` and `expect` (and `headers`, `http`), or `steps`: a list of those;
//! - in `send`, `\xHH` is a raw byte, `{META}` the revision's request `_meta` (`{}` in the
//!   handshake era), `{REPEAT:n:text}` the text n times (`\{` and `\}` for braces in it);
//! - `expect`: `{"result": true, "id": …}`, `{"tool_error": true, "id": …}`,
//!   `{"error": code or [codes], "id": id or [ids]}` (with `tool_error_ok`, `result_ok`,
//!   `error_ok` to accept those too), `{"nothing": true}`, `{"nothing_or_error": [codes]}`,
//!   `{"batch": [expectations]}`, `{"responses": [expectations]}` (in any order), or
//!   `{"http_only": true}`;
//! - `within_ms`: how long the answer (and the valid call after it) may take: far above what
//!   a busy machine needs (some 100 ms for 60 KB in a debug build at a load of 13 on two
//!   cores), far below what a quadratic algorithm would;
//! - `http`: `{"status": n or [n…], "any_body": true}`; by default 202 for nothing, 400 for a parse error, and in
//!   the stateless era 404 for -32601 and 400 for -32020/-32021/-32022.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::time::{Duration, Instant};

use mcp_tests::StdioServer;
use mcp_tests::http::HttpServer;
use serde_json::{Value, json};

const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Transport {
    Stdio,
    Http,
}

struct Case {
    name: String,
    category: String,
    eras: Vec<String>,
    transports: Vec<Transport>,
    fresh: bool,
    env: Vec<(String, String)>,
    steps: Vec<Step>,
    bug: Option<String>,
}

struct Step {
    send: String,
    expect: Value,
    headers: Vec<(String, Option<String>)>,
    status: Option<Vec<u16>>,
    /// Over HTTP, only the status is judged (a refusal of the transport's own, such as 413).
    any_body: bool,
    /// How long the answer may take.
    within: Option<Duration>,
}

fn program() -> &'static Path {
    env!("CARGO_BIN_EXE_catalogue").as_ref()
}

fn load() -> Vec<Case> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("hostile/cases.jsonl");
    let text = std::fs::read_to_string(&path).expect("the corpus");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("//"))
        .map(|line| {
            let c: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("a case that is not JSON ({e}): {line}"));
            let strings = |v: &Value| -> Vec<String> {
                v.as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|s| s.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let step = |s: &Value| Step {
                send: s["send"].as_str().expect("a `send`").to_owned(),
                expect: s["expect"].clone(),
                headers: s["headers"]
                    .as_object()
                    .map(|h| {
                        h.iter()
                            .map(|(k, v)| (k.clone(), v.as_str().map(str::to_owned)))
                            .collect()
                    })
                    .unwrap_or_default(),
                any_body: s["http"]["any_body"] == true,
                within: s["within_ms"].as_u64().map(Duration::from_millis),
                status: match &s["http"]["status"] {
                    Value::Null => None,
                    one @ Value::Number(_) => Some(vec![one.as_u64().unwrap_or(0) as u16]),
                    many => Some(
                        many.as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|n| n.as_u64().map(|n| n as u16))
                            .collect(),
                    ),
                },
            };
            let steps = match c["steps"].as_array() {
                Some(steps) => steps.iter().map(step).collect(),
                None => vec![step(&c)],
            };
            let eras = match strings(&c["eras"]) {
                e if e.is_empty() => vec![LEGACY.to_owned(), MODERN.to_owned()],
                e => e,
            };
            let transports = match strings(&c["transports"]) {
                t if t.is_empty() => vec![Transport::Stdio, Transport::Http],
                t => t
                    .iter()
                    .map(|t| {
                        if t == "http" {
                            Transport::Http
                        } else {
                            Transport::Stdio
                        }
                    })
                    .collect(),
            };
            Case {
                name: c["name"].as_str().unwrap_or("?").to_owned(),
                category: c["category"].as_str().unwrap_or("?").to_owned(),
                eras,
                transports,
                fresh: c["fresh"] == true,
                env: c["env"]
                    .as_object()
                    .map(|e| {
                        e.iter()
                            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_owned()))
                            .collect()
                    })
                    .unwrap_or_default(),
                steps,
                bug: c["bug"].as_str().map(str::to_owned),
            }
        })
        .collect()
}

/// The request `_meta` of a revision: everything a stateless request carries.
fn meta(era: &str) -> String {
    if era == MODERN {
        json!({
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "hostile", "version": "1.0.0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        })
        .to_string()
    } else {
        "{}".into()
    }
}

/// The bytes a `send` stands for.
fn expand(send: &str, era: &str) -> Vec<u8> {
    let text = send.replace("{META}", &meta(era));
    let mut out = Vec::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if text[i..].starts_with("{REPEAT:") {
            let rest = &text[i + "{REPEAT:".len()..];
            let colon = rest.find(':').expect("{REPEAT:n:text}");
            let n: usize = rest[..colon].parse().expect("a repeat count");
            let (piece, used) = unescape_until_brace(&rest[colon + 1..]);
            for _ in 0..n {
                out.extend_from_slice(&piece);
            }
            i += "{REPEAT:".len() + colon + 1 + used;
            continue;
        }
        match (bytes[i], bytes.get(i + 1)) {
            (b'\\', Some(b'x')) => {
                let hex = &text[i + 2..i + 4];
                out.push(u8::from_str_radix(hex, 16).expect("\\xHH"));
                i += 4;
            }
            (b'\\', Some(b'\\')) => {
                out.extend_from_slice(b"\\\\");
                i += 2;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// The text of a `{REPEAT:n:…}` up to its closing brace, and how many bytes it took.
fn unescape_until_brace(text: &str) -> (Vec<u8>, usize) {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1)) {
            (b'\\', Some(&c @ (b'{' | b'}'))) => {
                out.push(c);
                i += 2;
            }
            (b'\\', Some(b'x')) => {
                out.push(u8::from_str_radix(&text[i + 2..i + 4], 16).expect("\\xHH"));
                i += 4;
            }
            (b'}', _) => return (out, i + 1),
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    panic!("an unclosed {{REPEAT:…}}");
}

// ---------------------------------------------------------------------------------------------
// Judging answers

fn one_of(allowed: &Value, actual: &Value) -> bool {
    match allowed {
        Value::Array(list) => list.contains(actual),
        one => one == actual,
    }
}

fn is_tool_error(r: &Value) -> bool {
    r["result"]["isError"] == true
}

/// Whether one response meets one expectation of a single answer.
fn meets(expect: &Value, r: &Value) -> Result<(), String> {
    let id_ok = |r: &Value| one_of(&expect["id"], &r["id"]);
    let fail = |what: &str| Err(format!("expected {what} {expect}, got {r}"));
    if r.is_array() {
        return fail("a single response");
    }
    if expect["result"] == true {
        if r.get("result").is_some() && !is_tool_error(r) && id_ok(r) {
            return Ok(());
        }
        if let Some(codes) = expect.get("error_ok")
            && one_of(codes, &r["error"]["code"])
            && id_ok(r)
        {
            return Ok(());
        }
        return fail("a result");
    }
    if expect["tool_error"] == true {
        return if is_tool_error(r) && id_ok(r) {
            Ok(())
        } else {
            fail("a tool error")
        };
    }
    if let Some(codes) = expect.get("error") {
        if r.get("error").is_some() && one_of(codes, &r["error"]["code"]) && id_ok(r) {
            return Ok(());
        }
        if expect["tool_error_ok"] == true && is_tool_error(r) {
            return Ok(());
        }
        if expect["result_ok"] == true && r.get("result").is_some() {
            return Ok(());
        }
        return fail("an error");
    }
    fail("nothing like")
}

/// Whether the responses of one step meet its expectation.
fn judge(expect: &Value, responses: &[Value]) -> Result<(), String> {
    if expect["nothing"] == true || expect["http_only"] == true {
        return if responses.is_empty() || expect["http_only"] == true {
            Ok(())
        } else {
            Err(format!("expected no answer, got {responses:?}"))
        };
    }
    if let Some(codes) = expect.get("nothing_or_error") {
        return match responses {
            [] => Ok(()),
            [r] if one_of(codes, &r["error"]["code"]) && one_of(&expect["id"], &r["id"]) => Ok(()),
            _ => Err(format!(
                "expected nothing or an error {codes}, got {responses:?}"
            )),
        };
    }
    if let Some(items) = expect.get("batch").and_then(Value::as_array) {
        let [Value::Array(answers)] = responses else {
            return Err(format!("expected one batch answer, got {responses:?}"));
        };
        return matches_all(items, answers);
    }
    if let Some(items) = expect.get("responses").and_then(Value::as_array) {
        return matches_all(items, responses);
    }
    match responses {
        [r] => meets(expect, r),
        _ => Err(format!(
            "expected one answer {expect}, got {} ({responses:?})",
            responses.len()
        )),
    }
}

/// Every expectation met by a different response, and no response left over.
fn matches_all(expected: &[Value], answers: &[Value]) -> Result<(), String> {
    if expected.len() != answers.len() {
        let shown: Vec<&Value> = answers.iter().take(5).collect();
        return Err(format!(
            "expected {} answers, got {}: {shown:?}",
            expected.len(),
            answers.len()
        ));
    }
    let mut used = vec![false; answers.len()];
    for e in expected {
        let found = answers
            .iter()
            .enumerate()
            .find(|(i, a)| !used[*i] && meets(e, a).is_ok());
        match found {
            Some((i, _)) => used[i] = true,
            None => return Err(format!("no answer meets {e} among {answers:?}")),
        }
    }
    Ok(())
}

/// How many answers a step waits for before it stops listening.
fn answers_awaited(expect: &Value) -> usize {
    if let Some(items) = expect.get("responses").and_then(Value::as_array) {
        return items.len();
    }
    let silent = ["nothing", "http_only", "nothing_or_error"];
    usize::from(!silent.iter().any(|k| expect.get(*k).is_some()))
}

fn default_status(era: &str, expect: &Value) -> Vec<u16> {
    if expect["nothing"] == true {
        return vec![202];
    }
    if expect.get("nothing_or_error").is_some() {
        return vec![202, 400];
    }
    if let Some(codes) = expect.get("error") {
        let null_id = one_of(&expect["id"], &Value::Null);
        let codes: Vec<i64> = match codes {
            Value::Array(a) => a.iter().filter_map(Value::as_i64).collect(),
            c => c.as_i64().into_iter().collect(),
        };
        if codes == [-32700] {
            return vec![400];
        }
        let mut statuses = Vec::new();
        for code in codes {
            let status = match code {
                -32601 if era == MODERN => 404,
                -32022..=-32020 if era == MODERN => 400,
                _ if null_id => 400,
                _ => 200,
            };
            statuses.push(status);
            if null_id {
                // An id-less error to a body that looked like a request may come as 200.
                statuses.push(200);
            }
        }
        return statuses;
    }
    vec![200]
}

// ---------------------------------------------------------------------------------------------
// Running cases

/// A server at one revision over one transport, ready for hostile input.
enum Link {
    Stdio(StdioServer),
    Http {
        server: HttpServer,
        session: Option<String>,
    },
}

struct Target {
    transport: Transport,
    era: String,
    env: Vec<(String, String)>,
    fresh: bool,
    link: Option<Link>,
    sentinels: u64,
}

impl Target {
    fn new(transport: Transport, era: &str, env: &[(String, String)], fresh: bool) -> Target {
        Target {
            transport,
            era: era.to_owned(),
            env: env.to_vec(),
            fresh,
            link: None,
            sentinels: 0,
        }
    }

    fn label(&self) -> String {
        format!("{:?} {}", self.transport, self.era)
    }

    fn handshake(&self) -> bool {
        self.era != MODERN && !self.fresh
    }

    fn link(&mut self) -> &mut Link {
        if self.link.is_none() {
            let env: Vec<(&str, &str)> = self
                .env
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            let mut link = match self.transport {
                Transport::Stdio => Link::Stdio(StdioServer::spawn_with_env(program(), &env)),
                Transport::Http => Link::Http {
                    server: HttpServer::spawn(program(), &env),
                    session: None,
                },
            };
            if self.handshake() {
                let init = json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
                    "protocolVersion": self.era, "capabilities": {},
                    "clientInfo": {"name": "hostile", "version": "1.0.0"}}});
                match &mut link {
                    Link::Stdio(s) => {
                        s.send(&init);
                        let r = s.response("init");
                        assert_eq!(r["result"]["protocolVersion"], self.era.as_str(), "{r}");
                        s.notify("notifications/initialized", json!({}));
                    }
                    Link::Http { server, session } => {
                        let r = post(server, &self.era, None, init.to_string().into_bytes(), &[])
                            .send();
                        assert_eq!(r.status, 200, "{r:?}");
                        *session = r.header("mcp-session-id").map(str::to_owned);
                        let body = read_body(r);
                        assert!(body.iter().any(|m| m.get("result").is_some()), "{body:?}");
                        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
                        let r = post(
                            server,
                            &self.era,
                            session.as_deref(),
                            note.to_string().into_bytes(),
                            &[],
                        )
                        .send();
                        assert_eq!(r.status, 202, "{r:?}");
                    }
                }
            }
            self.link = Some(link);
        }
        self.link.as_mut().expect("a link")
    }

    /// A valid call (a ping on a server that never shook hands), whose answer must succeed.
    fn sentinel(&mut self) -> (Value, Vec<u8>) {
        self.sentinels += 1;
        let id = Value::String(format!("sentinel-{}", self.sentinels));
        let message = if self.fresh {
            json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
        } else {
            let meta: Value = serde_json::from_str(&meta(&self.era)).unwrap_or_default();
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                   "params": {"name": "static_text", "_meta": meta}})
        };
        (id, message.to_string().into_bytes())
    }

    /// Sends one step and returns its answers; fails when the valid call after it fails.
    fn run(&mut self, step: &Step) -> Result<(Option<u16>, Vec<Value>), String> {
        let body = expand(&step.send, &self.era);
        let (sentinel_id, sentinel) = self.sentinel();
        let era = self.era.clone();
        let awaited = answers_awaited(&step.expect);
        match self.link() {
            Link::Stdio(server) => {
                let mut line = body;
                line.push(b'\n');
                server.send_raw(&line);
                let mut sentinel_line = sentinel;
                sentinel_line.push(b'\n');
                server.send_raw(&sentinel_line);
                let deadline = Instant::now() + mcp_tests::TIMEOUT;
                let (mut answers, mut sentinel_answer) = (Vec::new(), None);
                while sentinel_answer.is_none() || answers.len() < awaited {
                    let left = deadline.saturating_duration_since(Instant::now());
                    let Some(message) = server.recv_line_within(left) else {
                        return Err(format!(
                            "no answer within {:?} (sentinel answered: {}); got {answers:?}",
                            mcp_tests::TIMEOUT,
                            sentinel_answer.is_some()
                        ));
                    };
                    if message.get("method").is_some() {
                        continue; // a notification or a request of the server's
                    }
                    if message["id"] == sentinel_id {
                        sentinel_answer = Some(message);
                    } else {
                        answers.push(message);
                    }
                }
                check_sentinel(sentinel_answer.as_ref())?;
                Ok((None, answers))
            }
            Link::Http { server, session } => {
                let response = post(server, &era, session.as_deref(), body, &step.headers).send();
                let status = response.status;
                if let Some(id) = response.header("mcp-session-id") {
                    *session = Some(id.to_owned());
                }
                let answers = read_body(response);
                let sentinel_response =
                    post(server, &era, session.as_deref(), sentinel, &[]).send();
                let sentinel_answers = read_body(sentinel_response);
                check_sentinel(sentinel_answers.iter().find(|m| m["id"] == sentinel_id))?;
                Ok((Some(status), answers))
            }
        }
    }

    /// The end of a stdio server's input: it must exit, and with 0.
    fn close(&mut self) -> Result<(), String> {
        if let Some(Link::Stdio(mut server)) = self.link.take() {
            server.close_stdin();
            let status = server.wait();
            if !status.success() {
                return Err(format!("exited with {status} at the end of its input"));
            }
        }
        Ok(())
    }
}

fn check_sentinel(answer: Option<&Value>) -> Result<(), String> {
    match answer {
        Some(a) if a.get("result").is_some() && !is_tool_error(a) => Ok(()),
        Some(a) => Err(format!("the valid call after the case failed: {a}")),
        None => Err("the valid call after the case was not answered".into()),
    }
}

/// A POST as a well-behaved client of the revision sends it, then the case's own headers.
fn post(
    server: &HttpServer,
    era: &str,
    session: Option<&str>,
    body: Vec<u8>,
    overrides: &[(String, Option<String>)],
) -> mcp_tests::http::Request {
    let mut request = server
        .request("POST", "/mcp")
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", era);
    if let Some(session) = session {
        request = request.header("Mcp-Session-Id", session);
    }
    if era == MODERN
        && let Some((method, name)) = method_and_name(&body)
    {
        request = request.header("Mcp-Method", &method);
        if let Some(name) = name {
            request = request.header("Mcp-Name", &name);
        }
    }
    for (name, value) in overrides {
        request = match value {
            Some(value) => request.header(name, value),
            None => request.without_header(name),
        };
    }
    request.body(body)
}

/// What a client puts in `Mcp-Method` and `Mcp-Name`: read from the body whatever else is
/// wrong with it (its id, its nesting, its numbers).
fn method_and_name(body: &[u8]) -> Option<(String, Option<String>)> {
    #[derive(mcp_runtime::serde::Deserialize)]
    #[serde(crate = "mcp_runtime::serde")]
    struct Named {
        method: String,
        #[serde(default)]
        params: Option<Params>,
    }
    #[derive(mcp_runtime::serde::Deserialize)]
    #[serde(crate = "mcp_runtime::serde")]
    struct Params {
        name: Option<String>,
        uri: Option<String>,
    }
    #[derive(mcp_runtime::serde::Deserialize)]
    #[serde(crate = "mcp_runtime::serde")]
    struct MethodOnly {
        method: String,
    }
    if let Ok(named) = serde_json::from_slice::<Named>(body) {
        let params = named.params;
        let name = match named.method.as_str() {
            "tools/call" | "prompts/get" => params.and_then(|p| p.name),
            "resources/read" => params.and_then(|p| p.uri),
            _ => None,
        };
        return Some((named.method, name));
    }
    let only: MethodOnly = serde_json::from_slice(body).ok()?;
    Some((only.method, None))
}

/// The JSON-RPC messages of a response body (JSON or SSE), notifications left out.
fn read_body(response: mcp_tests::http::Response) -> Vec<Value> {
    let messages: Vec<Value> = if response.media_type() == Some("text/event-stream") {
        response
            .events()
            .until_end()
            .iter()
            .filter(|e| e.data.as_deref().is_some_and(|d| !d.is_empty()))
            .map(|e| e.json())
            .collect()
    } else {
        let bytes = response.bytes();
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(v) => vec![v],
            Err(_) if bytes.is_empty() => Vec::new(),
            Err(_) => vec![json!({"non_json_body": String::from_utf8_lossy(&bytes)})],
        }
    };
    messages
        .into_iter()
        .filter(|m| m.get("method").is_none())
        .collect()
}

struct Outcome {
    label: String,
    case: String,
    bug: Option<String>,
    problem: String,
}

#[test]
fn every_hostile_message_gets_the_right_answer_and_the_server_stays_up() {
    let cases = load();
    assert!(cases.len() >= 100, "the corpus has {} cases", cases.len());
    // Cases that can share a server: one per (transport, revision, environment).
    type Key = (Transport, String, Vec<(String, String)>);
    let mut groups: BTreeMap<Key, Vec<&Case>> = BTreeMap::new();
    let mut fresh = Vec::new();
    for case in &cases {
        for &transport in &case.transports {
            for era in &case.eras {
                if case.fresh {
                    fresh.push((transport, era.clone(), case));
                } else {
                    groups
                        .entry((transport, era.clone(), case.env.clone()))
                        .or_default()
                        .push(case);
                }
            }
        }
    }
    let mut failures: Vec<Outcome> = Vec::new();
    let mut runs = 0;
    let mut run_case = |target: &mut Target, case: &Case, failures: &mut Vec<Outcome>| {
        runs += 1;
        let started = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(|| -> Result<(), String> {
            for (i, step) in case.steps.iter().enumerate() {
                let sent = Instant::now();
                let (status, answers) = target.run(step)?;
                if let Some(within) = step.within
                    && sent.elapsed() > within
                {
                    return Err(format!(
                        "step {i}: answered in {:?}, more than {within:?}",
                        sent.elapsed()
                    ));
                }
                if let Some(status) = status {
                    let allowed = step
                        .status
                        .clone()
                        .unwrap_or_else(|| default_status(&target.era, &step.expect));
                    if !allowed.contains(&status) {
                        return Err(format!(
                            "step {i}: HTTP status {status}, expected {allowed:?}; answers {answers:?}"
                        ));
                    }
                }
                if !(status.is_some() && step.any_body) {
                    judge(&step.expect, &answers).map_err(|e| format!("step {i}: {e}"))?;
                }
            }
            Ok(())
        }));
        let problem = match result {
            Ok(Ok(())) => None,
            Ok(Err(problem)) => Some(problem),
            Err(panic) => {
                // The server is in an unknown state: the next case gets a new one.
                target.link = None;
                Some(
                    panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                        .unwrap_or_else(|| "a panic".into()),
                )
            }
        };
        if started.elapsed() > Duration::from_secs(5) {
            eprintln!("slow: {} took {:?}", case.name, started.elapsed());
        }
        if let Some(mut problem) = problem {
            problem.truncate(600);
            failures.push(Outcome {
                label: target.label(),
                case: format!("{}/{}", case.category, case.name),
                bug: case.bug.clone(),
                problem,
            });
        }
    };
    for ((transport, era, env), cases) in &groups {
        let mut target = Target::new(*transport, era, env, false);
        for case in cases {
            run_case(&mut target, case, &mut failures);
        }
        if let Err(problem) = target.close() {
            failures.push(Outcome {
                label: target.label(),
                case: "(end of input)".into(),
                bug: None,
                problem,
            });
        }
    }
    for (transport, era, case) in fresh {
        let mut target = Target::new(transport, &era, &case.env, true);
        run_case(&mut target, case, &mut failures);
        let _ = target.close();
    }
    let known = failures.iter().filter(|f| f.bug.is_some()).count();
    eprintln!(
        "hostile corpus: {} cases, {runs} runs, {} failed ({known} of them known bugs)",
        cases.len(),
        failures.len()
    );
    for f in &failures {
        let mark = if f.bug.is_some() { "KNOWN BUG" } else { "FAIL" };
        eprintln!("{mark} [{}] {}: {}", f.label, f.case, f.problem);
    }
    // A case marked as a known bug whose every run passes: the bug is fixed, its mark stale.
    for case in cases.iter().filter(|c| c.bug.is_some()) {
        let name = format!("{}/{}", case.category, case.name);
        if !failures.iter().any(|f| f.case == name) {
            eprintln!("FIXED (remove its `bug`): {name}");
        }
    }
    assert!(
        failures.is_empty(),
        "{} hostile cases failed (listed above)",
        failures.len()
    );
}
