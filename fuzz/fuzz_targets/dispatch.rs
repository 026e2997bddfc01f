//! Framing and dispatch: arbitrary bytes, as one stdio line or as a stream of lines, routed
//! through a real `Server` with a few tools, a prompt and resources.
//!
//! The first byte chooses the opening (no handshake, or `initialize` at one of three
//! revisions) and whether the rest is one message or lines split at `\n`. Checked:
//!
//! - nothing panics (libFuzzer aborts on any panic, caught or not);
//! - every frame the server writes is one JSON-RPC 2.0 message (or a non-empty batch of
//!   responses), with an integer `code` and a string `message` in every error;
//! - every request with a valid id is answered exactly once, with that id (at most once when
//!   the input cancels something); a message that is no JSON, or whose id cannot be read, is
//!   answered with one error whose id is `null`; notifications and responses get no answer;
//!   and no response answers something that was never sent.
//!
//! A message with a `result` or an `error` and no `method` is response-shaped, and never
//! answered even when it is malformed (answering a response could start an exchange of
//! errors between two peers that never ends). A message nested past the server's limit is
//! refused unread: a parse error when it is not UTF-8, and otherwise as the same message
//! would be when serde_json can read it; deeper than that, at most one error.

#![no_main]

use std::collections::HashMap;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mcp_runtime::prelude::*;
use mcp_runtime::testing::Dispatcher;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// Add two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
}

/// Echo some text.
#[tool]
fn echo(text: String) -> String {
    text
}

/// Fail with a tool error.
#[tool]
fn fail(reason: String) -> Result<String, ToolError> {
    Err(ToolError::new(reason))
}

/// Answer after waiting once (a call that is not finished when first polled).
#[tool]
async fn later() -> &'static str {
    mcp_runtime::tokio::task::yield_now().await;
    "later"
}

/// Report progress, then answer.
#[tool]
async fn progress(ctx: Context) -> &'static str {
    ctx.progress(1.0, Some(2.0), String::from("half")).await;
    "done"
}

/// Greet someone.
#[prompt]
fn greeting(name: String) -> String {
    format!("Say hello to {name}.")
}

/// One item.
#[resource("fuzz://items/{id}", mime = "text/plain")]
fn item(id: u32) -> String {
    format!("item {id}")
}

/// A file, by path.
#[resource("fuzz://files/{+path}", mime = "text/plain")]
fn file(path: String) -> String {
    format!("contents of {path}")
}

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        mcp_runtime::server!()
            .auto_register(false)
            .tools(mcp_runtime::tools![add, echo, fail, later, progress])
            .prompts(mcp_runtime::prompts![greeting])
            .resources(mcp_runtime::resources![item, file])
            .client_request_timeout(std::time::Duration::from_millis(1))
            .build()
            .expect("the fuzz server builds")
    })
}

const OPENINGS: [Option<&str>; 4] = [
    None,
    Some("2025-11-25"),
    Some("2025-03-26"),
    Some("2024-11-05"),
];

fuzz_target!(|data: &[u8]| {
    let Some((&mode, payload)) = data.split_first() else {
        return;
    };
    let mut check = Oracle::default();
    let mut connection = Dispatcher::new(server());
    if let Some(version) = OPENINGS[usize::from(mode & 3)] {
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":"open","method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"fuzz","version":"1"}}}}}}"#
        );
        check.send(&mut connection, init.as_bytes());
    }
    if mode & 4 == 0 {
        check.send(&mut connection, payload);
    } else {
        // What the stdio transport does with a stream: split at newlines, skip blank lines.
        for line in payload.split(|&b| b == b'\n') {
            if !line.trim_ascii().is_empty() {
                check.send(&mut connection, line);
            }
        }
    }
    let rest = connection.finish();
    check.receive(&rest);
    check.verify();
});

/// What a message should be answered with.
#[derive(Debug)]
enum Expect {
    /// Exactly one response, with this id.
    Answer(Value),
    /// Exactly one error response with a `null` id; with a code when it is certain.
    NullError(Option<i64>),
    /// Nothing at all.
    Nothing,
    /// Nothing, or one error with a `null` id (a malformed notification or response).
    MaybeNullError,
    /// Nothing, or one error with any id (a message too deep to be read here).
    MaybeError,
}

#[derive(Default)]
struct Oracle {
    expected: Vec<Expect>,
    responses: Vec<Value>,
    /// Whether batches are allowed on the connection (after `initialize` at 2025-03-26).
    batches: bool,
    /// Something was cancelled: its request may go unanswered.
    cancelled: bool,
}

impl Oracle {
    fn send(&mut self, connection: &mut Dispatcher, message: &[u8]) {
        let initialize = self.expect(message);
        let frames = connection.dispatch(message);
        // `initialize` is answered before the next message is read: its result says whether
        // batches are allowed from now on.
        if initialize {
            for frame in &frames {
                if let Ok(v) = serde_json::from_slice::<Value>(frame)
                    && let Some(version) = v.pointer("/result/protocolVersion")
                {
                    self.batches = version == "2025-03-26";
                }
            }
        }
        self.receive(&frames);
    }

    /// Records what `message` should be answered with; true when it is an `initialize`.
    fn expect(&mut self, message: &[u8]) -> bool {
        // Past the server's nesting limit a message is refused unread, from what its top
        // level shows: as the same message would be, where serde_json can read it here.
        if depth(message) > server().max_nesting_depth() {
            let object = message.trim_ascii_start().first() == Some(&b'{');
            let expect = match std::str::from_utf8(message) {
                Err(_) => Expect::NullError(Some(-32700)),
                Ok(text) if object && serde_json::from_str::<Probe<'_>>(text).is_ok() => {
                    self.single(message, false).0
                }
                // Within serde_json's own depth limit (128), a failure to read is no JSON.
                Ok(text)
                    if depth(message) <= 100
                        && serde_json::from_str::<&RawValue>(text).is_err() =>
                {
                    Expect::NullError(Some(-32700))
                }
                // Deeper than serde_json reads, or members of the wrong type.
                Ok(_) => Expect::MaybeError,
            };
            self.expected.push(expect);
            return false;
        }
        let trimmed = message.trim_ascii_start();
        if trimmed.first() == Some(&b'[') {
            let Ok(items) = serde_json::from_slice::<Vec<&RawValue>>(trimmed) else {
                self.expected.push(Expect::NullError(None));
                return false;
            };
            if !self.batches || items.is_empty() {
                self.expected.push(Expect::NullError(Some(-32600)));
                return false;
            }
            for item in items {
                let expect = self.single(item.get().as_bytes(), true).0;
                self.expected.push(expect);
            }
            return false;
        }
        let (expect, initialize) = self.single(message, false);
        self.expected.push(expect);
        initialize
    }

    fn single(&mut self, message: &[u8], in_batch: bool) -> (Expect, bool) {
        let Ok(text) = std::str::from_utf8(message) else {
            return (Expect::NullError(Some(-32700)), false);
        };
        if in_batch && text.trim_start().starts_with('[') {
            return (Expect::NullError(Some(-32600)), false);
        }
        // Not JSON, or JSON but no JSON-RPC object (a scalar, wrong member types,
        // duplicate members): one error, to no id.
        let Ok(probe) = serde_json::from_str::<Probe<'_>>(text) else {
            return (Expect::NullError(None), false);
        };
        let id = match probe.id {
            None => None,
            Some(raw) => match valid_id(raw) {
                Some(id) => Some(id),
                None if probe.method.is_some() => {
                    return (Expect::NullError(Some(-32600)), false);
                }
                None => return (Expect::MaybeNullError, false),
            },
        };
        let jsonrpc_ok = probe.jsonrpc.map(RawValue::get) == Some("\"2.0\"");
        let params_ok = probe
            .params
            .is_none_or(|p| p.get() == "null" || p.get().starts_with('{'));
        match (probe.method, id) {
            (Some(method), Some(id)) => {
                let method: Option<String> = serde_json::from_str(method.get()).ok();
                let initialize = method.as_deref() == Some("initialize");
                (Expect::Answer(id), initialize && jsonrpc_ok && params_ok)
            }
            (Some(method), None) => {
                let method: Option<String> = serde_json::from_str(method.get()).ok();
                if method.as_deref() == Some("notifications/cancelled") {
                    self.cancelled = true;
                }
                if jsonrpc_ok && params_ok && method.is_some() {
                    (Expect::Nothing, false)
                } else {
                    (Expect::MaybeNullError, false)
                }
            }
            (None, id) => {
                if probe.result.is_some() || probe.error.is_some() {
                    // Response-shaped, well formed or not: never answered.
                    (Expect::Nothing, false)
                } else if let Some(id) = id {
                    // Neither a request nor a response: an invalid request, answered to its id.
                    (Expect::Answer(id), false)
                } else {
                    (Expect::NullError(Some(-32600)), false)
                }
            }
        }
    }

    fn receive(&mut self, frames: &[Vec<u8>]) {
        for frame in frames {
            let value: Value = serde_json::from_slice(frame).unwrap_or_else(|e| {
                panic!(
                    "a frame that is not JSON ({e}): {}",
                    String::from_utf8_lossy(frame)
                )
            });
            match value {
                Value::Array(items) => {
                    assert!(!items.is_empty(), "an empty batch response");
                    for item in items {
                        assert_response(&item);
                        self.responses.push(item);
                    }
                }
                message if message.get("method").is_some() => assert_message(&message),
                response => {
                    assert_response(&response);
                    self.responses.push(response);
                }
            }
        }
    }

    fn verify(&self) {
        let mut wanted: HashMap<String, usize> = HashMap::new();
        let (mut nulls_required, mut nulls_allowed, mut loose) = (0, 0, 0);
        let mut codes = Vec::new();
        for expect in &self.expected {
            match expect {
                Expect::Answer(id) => *wanted.entry(id.to_string()).or_default() += 1,
                Expect::NullError(code) => {
                    nulls_required += 1;
                    codes.extend(*code);
                }
                Expect::MaybeNullError => nulls_allowed += 1,
                Expect::MaybeError => loose += 1,
                Expect::Nothing => {}
            }
        }
        let mut got: HashMap<String, usize> = HashMap::new();
        let mut nulls = Vec::new();
        for response in &self.responses {
            if response["id"].is_null() {
                assert!(
                    response.get("error").is_some(),
                    "a result with a null id: {response}"
                );
                nulls.push(response["error"]["code"].as_i64().unwrap_or_default());
            } else {
                *got.entry(response["id"].to_string()).or_default() += 1;
            }
        }
        // Answers beyond what was asked for, to an id or to none, each taken by a message
        // that may have had one error.
        let mut extra = 0;
        for (id, n) in &got {
            let w = wanted.get(id).copied().unwrap_or(0);
            extra += n.saturating_sub(w);
        }
        extra += nulls.len().saturating_sub(nulls_required + nulls_allowed);
        assert!(
            extra <= loose,
            "{extra} responses that answer nothing that was sent: {:?} for {:?}",
            self.responses,
            self.expected,
        );
        if !self.cancelled {
            for (id, w) in &wanted {
                let n = got.get(id).copied().unwrap_or(0);
                assert_eq!(
                    n, *w,
                    "requests with id {id} answered {n} times, not {w}: {:?}",
                    self.responses
                );
            }
        }
        assert!(
            nulls.len() >= nulls_required,
            "{} errors with a null id; at least {nulls_required} expected: {:?} for {:?}",
            nulls.len(),
            self.responses,
            self.expected,
        );
        // Every certain code is among the null-id errors (as a multiset).
        let mut left = nulls.clone();
        for code in &codes {
            let Some(i) = left.iter().position(|c| c == code) else {
                panic!(
                    "expected a null-id error {code}, got {nulls:?} for {:?}",
                    self.expected
                );
            };
            left.swap_remove(i);
        }
    }
}

/// How deep arrays and objects nest, outside strings.
fn depth(message: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0, false, false);
    for &b in message {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// A JSON-RPC object's members as raw JSON; `null` counts as present.
#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present_string")]
    method: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// `method`: a string, or `null` for none; anything else makes the object no message.
fn present_string<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<&'de RawValue>, D::Error> {
    let raw = <&RawValue>::deserialize(d)?;
    match raw.get().as_bytes().first() {
        // A method the server cannot read as a string (a lone surrogate escape) makes the
        // message unreadable to it, as to most JSON parsers.
        Some(b'"') if serde_json::from_str::<String>(raw.get()).is_err() => Err(
            serde::de::Error::custom("`method` is not a string of Unicode characters"),
        ),
        Some(b'"') => Ok(Some(raw)),
        Some(b'n') => Ok(None),
        _ => Err(serde::de::Error::custom("`method` must be a string")),
    }
}

/// The id as JSON when it is one JSON-RPC allows and MCP keeps: a string or an integer.
fn valid_id(raw: &RawValue) -> Option<Value> {
    match serde_json::from_str::<Value>(raw.get()).ok()? {
        Value::String(s) => Some(Value::String(s)),
        Value::Number(n) if n.is_i64() => Some(Value::Number(n)),
        _ => None,
    }
}

fn assert_jsonrpc(message: &Value) {
    assert_eq!(message["jsonrpc"], "2.0", "{message}");
}

fn assert_message(message: &Value) {
    assert_jsonrpc(message);
    assert!(message["method"].is_string(), "{message}");
}

fn assert_response(response: &Value) {
    assert_jsonrpc(response);
    assert!(
        response.get("method").is_none(),
        "a request inside a batch response: {response}"
    );
    let id = &response["id"];
    assert!(id.is_string() || id.is_i64() || id.is_null(), "{response}");
    match (response.get("result"), response.get("error")) {
        (Some(_), None) => {}
        (None, Some(error)) => {
            assert!(error["code"].is_i64(), "{response}");
            assert!(error["message"].is_string(), "{response}");
        }
        _ => panic!("not exactly one of result and error: {response}"),
    }
}
