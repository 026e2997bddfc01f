//! The JSON-RPC 2.0 envelope: ids, incoming messages, error objects, outgoing frames.
//!
//! Incoming messages are read without copying their parameters: [`Envelope`] borrows the
//! `params` as raw JSON from the line it was read from, and each method deserialises them
//! straight into its own parameter type.

use std::fmt;
use std::sync::Arc;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;

/// JSON-RPC error codes used by MCP.
pub mod code {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i32 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i32 = -32600;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i32 = -32601;
    /// Invalid method parameters (also: an unknown tool name).
    pub const INVALID_PARAMS: i32 = -32602;
    /// An internal error of the server.
    pub const INTERNAL_ERROR: i32 = -32603;
    /// The resource does not exist (handshake-era revisions).
    pub const RESOURCE_NOT_FOUND: i32 = -32002;
    /// An HTTP header disagrees with the body (2026-07-28).
    pub const HEADER_MISMATCH: i32 = -32020;
    /// The request needs a client capability the client did not declare (2026-07-28).
    pub const MISSING_CLIENT_CAPABILITY: i32 = -32021;
    /// The request's protocol version is not supported (2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: i32 = -32022;
    /// The server has too many requests of this client in flight (an implementation-defined
    /// server error, in JSON-RPC's reserved range).
    pub const SERVER_BUSY: i32 = -32000;
    /// The caller's token lacks the OAuth scopes an item requires (over HTTP, also a 403
    /// with `WWW-Authenticate: Bearer error="insufficient_scope"`); `data.scopes` names
    /// the scopes needed.
    pub const INSUFFICIENT_SCOPE: i32 = -32031;
}

/// A request id: a string or an integer, echoed exactly as the client sent it.
///
/// ```
/// use mcp_runtime::protocol::RequestId;
///
/// let id: RequestId = serde_json::from_str("\"abc\"").unwrap();
/// assert_eq!(serde_json::to_string(&id).unwrap(), "\"abc\"");
/// let id: RequestId = serde_json::from_str("7").unwrap();
/// assert_eq!(id, RequestId::Number(7));
/// assert!(serde_json::from_str::<RequestId>("1.5").is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(Arc<str>),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(n) => serializer.serialize_i64(*n),
            RequestId::String(s) => serializer.serialize_str(s),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl de::Visitor<'_> for IdVisitor {
            type Value = RequestId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an integer")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RequestId, E> {
                Ok(RequestId::Number(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RequestId, E> {
                i64::try_from(v)
                    .map(RequestId::Number)
                    .map_err(|_| E::custom("integer id out of range"))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RequestId, E> {
                Ok(RequestId::String(v.into()))
            }
        }
        deserializer.deserialize_any(IdVisitor)
    }
}

/// One incoming JSON-RPC object, with its parts borrowed from the raw line.
///
/// Nothing is validated yet: [`Envelope::classify`] turns it into a request, a notification, a
/// response, or the error to answer with.
///
/// A member that is present is `Some` even when its value is `null`: `"id": null` is an
/// invalid id, not a missing one.
#[derive(Clone, Deserialize)]
pub(crate) struct Envelope<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "borrowed_str")]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(deserializer).map(Some)
}

/// A string borrowed from the message when it has no escapes (serde's own `Cow` support
/// copies every string it finds behind an `Option`); `null` reads as absent.
fn borrowed_str<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<std::borrow::Cow<'de, str>>, D::Error> {
    Option::<Text<'de>>::deserialize(deserializer).map(|t| t.map(|t| t.0))
}

/// A JSON string, borrowed from the text it was read from when it has no escapes, copied
/// only when it has (serde's own `Cow<str>` is always a copy).
pub(crate) struct Text<'a>(pub std::borrow::Cow<'a, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> de::Visitor<'de> for Visit {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(std::borrow::Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(std::borrow::Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(Visit)
    }
}

/// What an incoming object is.
pub(crate) enum Incoming<'a> {
    Request {
        id: RequestId,
        method: std::borrow::Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    Notification {
        method: std::borrow::Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    /// A response from the client (to a server-to-client request).
    Response {
        id: Option<RequestId>,
        result: Result<&'a RawValue, &'a RawValue>,
    },
}

impl<'a> Envelope<'a> {
    /// Reads a message's members. Only a JSON object is a message: serde would also read
    /// the struct from an array, by position, which would make `["2.0", 1, "ping"]` a ping.
    pub(crate) fn parse(text: &'a str) -> Result<Envelope<'a>, serde_json::Error> {
        if text.trim_start().starts_with('[') {
            return Err(serde::de::Error::custom(
                "an array is not a JSON-RPC message (a batch holds objects)",
            ));
        }
        serde_json::from_str(text)
    }

    /// Whether the message asks for an answer: a `method`, and an `id` that is not `null`
    /// (what the transport needs to know before the message is validated).
    #[cfg(feature = "http")]
    pub(crate) fn asks(&self) -> Option<&str> {
        self.method
            .as_deref()
            .filter(|_| self.id.is_some_and(|id| id.get() != "null"))
    }

    /// The message's `method` (when it is a string) and its `params` as they stand, for the
    /// HTTP transport's comparison of the stateless era's headers with the body.
    #[cfg(feature = "http")]
    pub(crate) fn method_and_params(&self) -> (Option<&str>, Option<&'a RawValue>) {
        (self.method.as_deref(), self.params)
    }

    /// Whether the message belongs to the 2026-07-28 era: `server/discover`, or a protocol
    /// version in its parameters' `_meta`.
    pub(crate) fn is_stateless_era(&self) -> bool {
        self.method.as_deref().is_some_and(|method| {
            crate::server::stateless::is_stateless(
                method,
                self.params.filter(|p| p.get() != "null"),
            )
        })
    }

    /// Whether the message is a response (the peer's answer): no `method`, and a `result` or
    /// an `error`, well-formed or not.
    pub(crate) fn is_response(&self) -> bool {
        self.method.is_none() && (self.result.is_some() || self.error.is_some())
    }

    /// Validates the envelope against JSON-RPC 2.0 as MCP restricts it.
    ///
    /// On failure returns the error to answer with, and the id to answer it to when one could
    /// be read.
    pub(crate) fn classify(self) -> Result<Incoming<'a>, (Option<RequestId>, RpcError)> {
        let id = match self.id {
            None => None,
            Some(raw) => match serde_json::from_str::<RequestId>(raw.get()) {
                Ok(id) => Some(id),
                Err(_) => {
                    return Err((
                        None,
                        RpcError::invalid_request(format!(
                            "`id` must be a string or an integer, not {}",
                            raw.get()
                        )),
                    ));
                }
            },
        };
        if self.jsonrpc.map(RawValue::get) != Some("\"2.0\"") {
            return Err((
                id,
                RpcError::invalid_request("`jsonrpc` must be exactly \"2.0\""),
            ));
        }
        // `"params": null` is read as no params: some clients send it on notifications.
        let params = self.params.filter(|p| p.get() != "null");
        if let Some(method) = self.method {
            // Served as a request, it would be read otherwise by a peer (or a proxy) that
            // takes it for the response it also claims to be.
            if self.result.is_some() || self.error.is_some() {
                return Err((
                    id,
                    RpcError::invalid_request(
                        "a message is a request or a response: it has `method`, so no `result` or `error`",
                    ),
                ));
            }
            if let Some(params) = params
                && !params.get().starts_with('{')
            {
                return Err((
                    id,
                    RpcError::invalid_request("`params` must be an object when present"),
                ));
            }
            return Ok(match id {
                Some(id) => Incoming::Request { id, method, params },
                None => Incoming::Notification { method, params },
            });
        }
        match (self.result, self.error) {
            (Some(result), None) => Ok(Incoming::Response {
                id,
                result: Ok(result),
            }),
            (None, Some(error)) => Ok(Incoming::Response {
                id,
                result: Err(error),
            }),
            _ => Err((
                id,
                RpcError::invalid_request(
                    "a message needs `method` (request or notification) or exactly one of `result` and `error` (response)",
                ),
            )),
        }
    }
}

/// A JSON-RPC error object.
///
/// ```
/// use mcp_runtime::protocol::RpcError;
///
/// let e = RpcError::invalid_params("unknown tool `nope`");
/// assert_eq!(e.code, -32602);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RpcError {
    /// The error code (see [`code`]).
    pub code: i32,
    /// A short description.
    pub message: String,
    /// Extra machine-readable detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
}

impl RpcError {
    /// An error with a code and a message.
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Attaches `data`.
    pub fn with_data(mut self, data: serde_json::Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32700`.
    pub fn parse_error(message: impl Into<String>) -> Self {
        RpcError::new(code::PARSE_ERROR, message)
    }

    /// `-32600`.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        RpcError::new(code::INVALID_REQUEST, message)
    }

    /// `-32601`.
    pub fn method_not_found(method: &str) -> Self {
        RpcError::new(
            code::METHOD_NOT_FOUND,
            format!("method not found: `{method}`"),
        )
    }

    /// `-32602`.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        RpcError::new(code::INVALID_PARAMS, message)
    }

    /// `-32603`.
    pub fn internal(message: impl Into<String>) -> Self {
        RpcError::new(code::INTERNAL_ERROR, message)
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for RpcError {}

/// One serialised outgoing message, without its trailing newline.
pub type Frame = Vec<u8>;

/// Serialises a success response around an already-serialised result.
pub(crate) fn response_frame(id: &RequestId, result: &str) -> Frame {
    let mut out = String::with_capacity(result.len() + 40);
    out.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
    write_id(&mut out, id);
    out.push_str(",\"result\":");
    out.push_str(result);
    out.push('}');
    out.into_bytes()
}

/// A result written by `write` into a buffer of `capacity` bytes to start with: with room to
/// spare (about the result's size, and more), [`response_frame_around`] can make the frame
/// in it.
pub(crate) fn result_json_sized(capacity: usize, write: impl FnOnce(&mut String)) -> String {
    // The buffer is empty, so it is text already.
    let mut out = String::from_utf8(spare::take(capacity)).unwrap_or_default();
    write(&mut out);
    out
}

/// One large frame's buffer kept for the next large result, per thread.
///
/// A result of a megabyte serialised into a fresh buffer costs the kernel a fault for every
/// page of it, each call: the allocator hands a buffer that large back to the system when
/// it is freed (or maps it afresh), and two of them freed in one call (the result's and the
/// tool's own text) take the heap over its trim threshold. A transport that has written a
/// frame gives its buffer back with [`recycle`](spare::recycle): stdio on Linux does, where a
/// call answered at once is serialised and written on the one thread stdio runs on (a result
/// made on another thread allocates as before). Small results never use it: the allocator
/// keeps those itself. One buffer of at most 16 MiB stays held per thread that wrote one.
pub(crate) mod spare {
    use std::cell::Cell;

    /// Buffers smaller than this are left to the allocator.
    const LARGE: usize = 64 << 10;
    /// A buffer larger than this is not kept: the memory would stay held for nothing.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    const MAX_KEPT: usize = 16 << 20;

    thread_local! {
        static SPARE: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
    }

    /// An empty buffer of at least `capacity` bytes: the kept one when it is large enough.
    pub(crate) fn take(capacity: usize) -> Vec<u8> {
        if capacity >= LARGE
            && let Ok(kept) = SPARE.try_with(Cell::take)
        {
            if kept.capacity() >= capacity {
                return kept;
            }
            // Too small for this one: a later, smaller result may still use it.
            let _ = SPARE.try_with(|spare| spare.set(kept));
        }
        Vec::with_capacity(capacity)
    }

    /// Keeps a written frame's buffer for the next large result, if it is worth keeping
    /// (and larger than the one kept already).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn recycle(mut frame: Vec<u8>) {
        if !(LARGE..=MAX_KEPT).contains(&frame.capacity()) {
            return;
        }
        frame.clear();
        let _ = SPARE.try_with(|spare| {
            let kept = spare.take();
            spare.set(if kept.capacity() >= frame.capacity() {
                kept
            } else {
                frame
            });
        });
    }
}

/// [`response_frame`] in the result's own buffer: with a numeric id and room in the buffer
/// (see [`result_json_sized`]) the envelope goes in front of the result, and the response
/// costs no allocation of its own.
pub(crate) fn response_frame_around(id: &RequestId, mut result: String) -> Frame {
    const HEAD: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":";
    const RESULT: &[u8] = b",\"result\":";
    let RequestId::Number(n) = id else {
        return response_frame(id, &result);
    };
    // HEAD, at most 20 characters of an i64, RESULT: 52 bytes at most.
    let mut digits = itoa::Buffer::new();
    let mut head = [0u8; 64];
    let mut len = 0;
    for part in [HEAD, digits.format(*n).as_bytes(), RESULT] {
        head[len..len + part.len()].copy_from_slice(part);
        len += part.len();
    }
    match std::str::from_utf8(&head[..len]) {
        Ok(head) if result.capacity() - result.len() > head.len() => {
            result.insert_str(0, head);
            result.push('}');
            result.into_bytes()
        }
        _ => response_frame(id, &result),
    }
}

/// Serialises an error response; `id` is `null` when it could not be read.
pub(crate) fn error_frame(id: Option<&RequestId>, error: &RpcError) -> Frame {
    let mut out = String::with_capacity(96 + error.message.len());
    out.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
    match id {
        Some(id) => write_id(&mut out, id),
        None => out.push_str("null"),
    }
    out.push_str(",\"error\":");
    // An RpcError holds only strings, numbers and JSON values: it always serialises.
    out.push_str(&serde_json::to_string(error).unwrap_or_default());
    out.push('}');
    out.into_bytes()
}

/// Serialises a notification.
pub(crate) fn notification_frame(method: &str, params: &impl Serialize) -> Frame {
    #[derive(Serialize)]
    struct Notification<'a, P> {
        jsonrpc: &'static str,
        method: &'a str,
        params: &'a P,
    }
    serde_json::to_vec(&Notification {
        jsonrpc: "2.0",
        method,
        params,
    })
    .unwrap_or_default()
}

fn write_id(out: &mut String, id: &RequestId) {
    match id {
        // Without the formatting machinery: an id is written into every response.
        RequestId::Number(n) => out.push_str(itoa::Buffer::new().format(*n)),
        RequestId::String(s) => super::write_json_string(out, s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_large_frame_is_the_next_large_results_buffer() {
        let mut frame = spare::take(1 << 20);
        let address = frame.as_ptr();
        frame.extend_from_slice(b"an earlier answer");
        spare::recycle(frame);
        // A smaller large result takes it, empty.
        let next = spare::take(256 << 10);
        assert_eq!((next.as_ptr(), next.len()), (address, 0));
        assert!(next.capacity() >= 1 << 20);
        spare::recycle(next);
        // A larger one gets a buffer of its own and leaves the kept one for later.
        let larger = spare::take(2 << 20);
        assert_ne!(larger.as_ptr(), address);
        let kept = spare::take(1 << 20);
        assert_eq!(kept.as_ptr(), address);
        drop((larger, kept));
        // Small results and small frames are the allocator's.
        spare::recycle(Vec::with_capacity(1024));
        assert_eq!(spare::take(100).capacity(), 100);
    }

    fn classify(text: &str) -> Result<Incoming<'_>, (Option<RequestId>, RpcError)> {
        serde_json::from_str::<Envelope<'_>>(text)
            .expect("an object")
            .classify()
    }

    #[test]
    fn a_request_that_also_answers_is_invalid() {
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized","result":{}}"#,
        ] {
            let Err((_, error)) = classify(text) else {
                panic!("served: {text}");
            };
            assert_eq!(error.code, -32600, "{text}");
        }
    }

    #[test]
    fn request_with_string_id_is_a_request() {
        match classify(r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#) {
            Ok(Incoming::Request { id, method, .. }) => {
                assert_eq!(id, RequestId::String("a".into()));
                assert_eq!(method, "ping");
            }
            _ => panic!("not a request"),
        }
    }

    #[test]
    fn missing_jsonrpc_is_invalid_request_keeping_the_id() {
        let Err((id, e)) = classify(r#"{"id":3,"method":"ping"}"#) else {
            panic!("accepted")
        };
        assert_eq!(id, Some(RequestId::Number(3)));
        assert_eq!(e.code, code::INVALID_REQUEST);
    }

    #[test]
    fn null_and_fractional_ids_are_invalid() {
        for text in [
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
        ] {
            let Err((id, e)) = classify(text) else {
                panic!("accepted {text}")
            };
            assert_eq!(id, None);
            assert_eq!(e.code, code::INVALID_REQUEST);
        }
    }

    #[test]
    fn scalar_params_are_invalid() {
        let Err((_, e)) = classify(r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":3}"#) else {
            panic!("accepted")
        };
        assert_eq!(e.code, code::INVALID_REQUEST);
    }

    #[test]
    fn a_frame_around_its_result_is_the_same_frame() {
        let small = serde_json::to_string(&serde_json::json!({"content": []})).unwrap();
        let large = format!("{{\"text\":\"{}\"}}", "a".repeat(300));
        for id in [
            RequestId::Number(i64::MIN),
            RequestId::Number(7),
            RequestId::String("x\"y".into()),
        ] {
            for result in [small.clone(), large.clone(), String::from("{}")] {
                assert_eq!(
                    response_frame_around(&id, result.clone()),
                    response_frame(&id, &result),
                    "{id} {result}"
                );
            }
        }
        // With room in the buffer, the frame is made in it.
        let mut roomy = String::with_capacity(256);
        roomy.push_str("{}");
        let at = roomy.as_ptr();
        let frame = response_frame_around(&RequestId::Number(1), roomy);
        assert_eq!(frame.as_ptr(), at);
        // A result serialised for a frame leaves that room.
        let result = result_json_sized(256, |out| out.push_str(r#"{"content":[]}"#));
        assert!(result.capacity() - result.len() > 40);
    }

    #[test]
    fn frames_echo_ids_as_sent() {
        let f = response_frame(&RequestId::String("x\"y".into()), "{}");
        assert_eq!(
            String::from_utf8(f).unwrap(),
            r#"{"jsonrpc":"2.0","id":"x\"y","result":{}}"#
        );
        let f = error_frame(None, &RpcError::parse_error("bad"));
        assert_eq!(
            String::from_utf8(f).unwrap(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#
        );
    }
}
