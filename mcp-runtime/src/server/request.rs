//! One request on its way through the server: the value every method's code receives, what
//! routing it produced, and how its era shapes its result.
//!
//! A request of either era becomes one [`Request`] — its method (from the method table), id,
//! parameters, revision, session and channel — and is served by the same code. The era
//! differs in one place only, [`Finish`]: the handshake era sends a result as it is; the
//! stateless era marks it complete with its cache hints, or replaces it with an
//! `InputRequiredResult` when the handler asked the client something, or with -32021 when
//! the handler failed for a capability the client did not declare.

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use serde::Deserialize;
use serde_json::value::RawValue;

use super::Server;
use super::stateless::StatelessParams;
use crate::protocol::{
    CacheHint, Frame, Method, ProtocolVersion, RequestId, RpcError, error_frame,
    response_frame_around,
};
use crate::session::{RequestChannel, RoundTrip, Session};

/// The outcome of routing one message.
pub(crate) enum Routed {
    /// Answered already (or nothing to answer: a notification, a response).
    Reply(Option<Frame>),
    /// A handler call to run; its frame, if any, is the response.
    Deferred(Pin<Box<dyn Future<Output = Option<Frame>> + Send + 'static>>),
}

/// One request, as every method's code receives it.
pub(crate) struct Request<'a> {
    pub server: &'a Server,
    pub session: &'a Arc<Session>,
    pub id: &'a RequestId,
    pub method: Method,
    /// The method's name on the wire (a custom method's own; for MCP's, `method.name()`).
    pub name: &'a str,
    /// The revision results are shaped for (a stateless request's results have the shape of
    /// the latest handshake revision).
    pub version: ProtocolVersion,
    pub params: Option<&'a RawValue>,
    /// A stateless request's parameters as its preparation read them, for code that can
    /// take what it needs from them rather than read the text again; `None` in the
    /// handshake era, and below the server's layers (which may have changed the text).
    pub read: Option<&'a StatelessParams<'a>>,
    pub channel: &'a RequestChannel,
    pub finish: Finish,
    /// What the server's layers hid from this request (see `McpRequest::hide_tool`).
    pub hidden: Option<&'a crate::session::SessionVisibility>,
}

impl<'a> Request<'a> {
    /// The parameters; absent parameters read as an empty object.
    pub(crate) fn params<T: Deserialize<'a>>(&self) -> Result<T, RpcError> {
        parse_params(self.params)
    }

    /// The same request, answering on another channel.
    pub(crate) fn with_channel<'c>(&self, channel: &'c RequestChannel) -> Request<'c>
    where
        'a: 'c,
    {
        Request {
            server: self.server,
            session: self.session,
            id: self.id,
            method: self.method,
            name: self.name,
            version: self.version,
            params: self.params,
            read: self.read,
            channel,
            finish: self.finish.clone(),
            hidden: self.hidden,
        }
    }

    /// Whether the request belongs to the stateless era.
    pub(crate) fn is_stateless(&self) -> bool {
        self.finish.stateless.is_some()
    }

    /// Answers now with `result`, shaped for the era.
    pub(crate) fn answer(
        &self,
        result: Result<String, RpcError>,
        cache: Option<CacheHint>,
    ) -> Routed {
        Routed::Reply(Some(frame(self.id, self.finish.apply(result, cache))))
    }

    /// Answers with what `work` produces, shaped for the era, when it is done.
    pub(crate) fn answer_later(
        &self,
        work: impl Future<Output = Result<String, RpcError>> + Send + 'static,
        cache: Option<CacheHint>,
    ) -> Routed {
        let id = self.id.clone();
        let finish = self.finish.clone();
        Routed::Deferred(Box::pin(async move {
            Some(frame(&id, finish.apply(work.await, cache)))
        }))
    }
}

/// A response frame, or an error frame.
pub(crate) fn frame(id: &RequestId, result: Result<String, RpcError>) -> Frame {
    match result {
        Ok(result) => response_frame_around(id, result),
        Err(error) => error_frame(Some(id), &error),
    }
}

/// How a request's era shapes its result (see the module's documentation).
#[derive(Clone, Default)]
pub(crate) struct Finish {
    stateless: Option<Stateless>,
}

#[derive(Clone)]
struct Stateless {
    server: Server,
    round_trip: Option<Arc<RoundTrip>>,
}

impl Finish {
    /// The handshake era's: results go as they are.
    pub(crate) fn handshake() -> Finish {
        Finish::default()
    }

    /// Whether it is the stateless era's.
    pub(crate) fn is_stateless(&self) -> bool {
        self.stateless.is_some()
    }

    /// The stateless era's, for a request whose handler may ask the client for input
    /// through `round_trip`.
    pub(crate) fn stateless(server: &Server, round_trip: Option<Arc<RoundTrip>>) -> Finish {
        Finish {
            stateless: Some(Stateless {
                server: server.clone(),
                round_trip,
            }),
        }
    }

    /// The result as the era sends it; `cache` are the hints a stateless result carries.
    pub(crate) fn apply(
        &self,
        result: Result<String, RpcError>,
        cache: Option<CacheHint>,
    ) -> Result<String, RpcError> {
        let Some(stateless) = &self.stateless else {
            return result;
        };
        let mut cache = cache;
        if let Some(round_trip) = &stateless.round_trip {
            if let Some(input_required) = round_trip.input_required(stateless.server.state_keys()) {
                return Ok(input_required);
            }
            if let Some(error) = round_trip.missing_capability(&result) {
                return Err(error);
            }
            // A retry's result depends on the answers it carried: never cache it.
            if round_trip.retry {
                cache = cache.map(|_| CacheHint::UNCACHEABLE);
            }
        }
        result.map(|r| mark_complete(&r, cache))
    }
}

/// Marks a result complete, as every stateless result must say.
pub(crate) fn mark_complete(result: &str, cache: Option<CacheHint>) -> String {
    // Every result the runtime builds is one serialised object; the fields go in front of its
    // members, so the result is not parsed again on every stateless request.
    let Some(members) = result.trim_start().strip_prefix('{') else {
        return result.to_owned();
    };
    let mut out = String::with_capacity(result.len() + 64);
    out.push_str("{\"resultType\":\"complete\"");
    if let Some(cache) = cache {
        let scope = if cache.public { "public" } else { "private" };
        out.push_str(&format!(
            ",\"ttlMs\":{},\"cacheScope\":\"{scope}\"",
            cache.ttl_ms
        ));
    }
    if !members.trim_start().starts_with('}') {
        out.push(',');
    }
    out.push_str(members);
    out
}

/// Reads a method's parameters; absent parameters read as an empty object.
pub(crate) fn parse_params<'a, T: Deserialize<'a>>(
    params: Option<&'a RawValue>,
) -> Result<T, RpcError> {
    let text = params.map_or("{}", RawValue::get);
    serde_json::from_str(text).map_err(|e| {
        let message = e.to_string();
        let message = match message.rfind(" at line ") {
            Some(i) => &message[..i],
            None => &message,
        };
        RpcError::invalid_params(format!("invalid params: {message}"))
    })
}

/// Runs a future, turning a panic inside it into an error value: user code never takes the
/// server down with it.
pub(crate) struct CatchUnwind<F>(pub F);

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let inner = &mut self.0;
        match catch_unwind(AssertUnwindSafe(|| Pin::new(inner).poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

/// The message of a panic, for the log.
pub(crate) fn panic_message(panic: &(dyn Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(a non-string panic payload)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn completing_a_result_adds_its_type_and_cache_hints() {
        let hint = Some(CacheHint {
            ttl_ms: 5,
            public: false,
        });
        let done: Value = serde_json::from_str(&mark_complete(r#"{"tools":[]}"#, hint)).unwrap();
        assert_eq!(
            done,
            json!({"resultType": "complete", "ttlMs": 5, "cacheScope": "private", "tools": []})
        );
        let done: Value = serde_json::from_str(&mark_complete("{}", None)).unwrap();
        assert_eq!(done, json!({"resultType": "complete"}));
    }
}
