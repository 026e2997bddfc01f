//! Each request as an operator sees it: counted and timed in the server's [`Metrics`], and
//! (feature `otel`) a span of its own, parented on the caller's trace. Nothing is done when
//! neither is on.

use std::sync::Arc;
use std::time::Instant;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::Server;
use super::request::Routed;
use crate::metrics::{Labels, Metrics};
use crate::protocol::{Method, RequestId};
use crate::session::{RequestChannel, Session};

/// The low-cardinality name a request concerns: the tool of `tools/call`, the prompt of
/// `prompts/get` (`gen_ai.tool.name`, `gen_ai.prompt.name`).
pub(crate) type Target = Option<(&'static str, String)>;

/// What the request names, read from its parameters.
#[derive(Default, Deserialize)]
pub(crate) struct Named {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub uri: Option<String>,
}

impl Server {
    /// The server's metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    /// How many sessions are live (over stdio, the connection).
    pub fn session_count(&self) -> usize {
        self.inner
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|s| s.strong_count() > 0)
            .count()
    }

    /// Serves a request (`serve`), observed when metrics or tracing are on.
    pub(super) fn observed(
        &self,
        session: &Arc<Session>,
        id: &RequestId,
        name: &str,
        params: Option<&RawValue>,
        channel: &RequestChannel,
        serve: impl FnOnce() -> Routed,
    ) -> Routed {
        let metrics = self.metrics().is_enabled();
        let tracing = crate::telemetry::tracing_on();
        if !metrics && !tracing {
            return serve();
        }
        let started = Instant::now();
        let known = Method::parse(name).is_some() || self.has_custom_method(name);
        // A method nobody serves is counted as one: names made up by a client do not become
        // series of their own.
        let method = if known { name } else { "_other" };
        let named: Named = match name {
            "tools/call"
            | "prompts/get"
            | "resources/read"
            | "resources/subscribe"
            | "resources/unsubscribe" => params
                .and_then(|p| serde_json::from_str(p.get()).ok())
                .unwrap_or_default(),
            _ => Named::default(),
        };
        let target: Target = match name {
            "tools/call" => named.name.clone().map(|n| ("gen_ai.tool.name", n)),
            "prompts/get" => named.name.clone().map(|n| ("gen_ai.prompt.name", n)),
            _ => None,
        };
        if metrics {
            self.metrics().started();
        }
        let span = tracing
            .then(|| {
                crate::telemetry::start_span(
                    session,
                    id,
                    method,
                    target.as_ref(),
                    named.uri.as_deref(),
                    params,
                    channel,
                )
            })
            .flatten();
        let routed = match &span {
            Some(span) => span.in_scope(serve),
            None => serve(),
        };
        let ending = Ending {
            metrics: metrics.then(|| self.clone()),
            started,
            method: method.to_owned(),
            target,
            span,
            done: false,
        };
        match routed {
            Routed::Reply(frame) => {
                ending.end(frame.as_deref());
                Routed::Reply(frame)
            }
            Routed::Deferred(work) => {
                let work = match &ending.span {
                    Some(span) => span.around(work),
                    None => work,
                };
                Routed::Deferred(Box::pin(async move {
                    let frame = work.await;
                    ending.end(frame.as_deref());
                    frame
                }))
            }
        }
    }
}

/// A request being observed, recorded once its response is known, or as `cancelled` if
/// it is dropped first.
struct Ending {
    metrics: Option<Server>,
    started: Instant,
    method: String,
    target: Target,
    span: Option<crate::telemetry::RequestSpan>,
    done: bool,
}

impl Ending {
    fn end(mut self, frame: Option<&[u8]>) {
        let outcome = frame.map_or(Outcome::Ok, |f| outcome(&self.method, f));
        self.record(outcome);
    }

    fn record(&mut self, outcome: Outcome) {
        self.done = true;
        let code;
        let error = match outcome {
            Outcome::Ok => None,
            Outcome::ToolError => Some("tool_error"),
            Outcome::Cancelled => Some("cancelled"),
            Outcome::Code(n, _) => {
                code = n.to_string();
                Some(code.as_str())
            }
        };
        if let Some(server) = &self.metrics {
            server.metrics().finished(
                Labels {
                    method: &self.method,
                    target: self.target.as_ref().map(|(k, n)| (*k, n.as_str())),
                    error,
                },
                self.started.elapsed(),
            );
        }
        if let Some(span) = self.span.take() {
            let message = match &outcome {
                Outcome::Code(_, message) => message.clone(),
                _ => None,
            };
            span.end(error, message.as_deref());
        }
    }
}

impl Drop for Ending {
    fn drop(&mut self) {
        if !self.done {
            self.record(Outcome::Cancelled);
        }
    }
}

/// How a request ended, as its response frame says.
#[derive(Debug, PartialEq)]
enum Outcome {
    Ok,
    /// A JSON-RPC error: its code and message.
    Code(i64, Option<String>),
    /// A tool's result with `isError: true`.
    ToolError,
    Cancelled,
}

/// Reads the outcome off a response frame: the frames the server writes begin
/// `{"jsonrpc":"2.0","id":…,` and then `"result"` or `"error":{"code":N`, so only the head of
/// the frame is looked at, and for a tool call its tail (`isError` is the result's last
/// member but `_meta`).
fn outcome(method: &str, frame: &[u8]) -> Outcome {
    let head = &frame[..frame.len().min(600)];
    let error = memchr::memmem::find(head, b",\"error\":{\"code\":");
    let result = memchr::memmem::find(head, b",\"result\":");
    if let Some(at) = error
        && result.is_none_or(|r| at < r)
    {
        #[derive(Deserialize)]
        struct Error {
            code: i64,
            message: Option<String>,
        }
        #[derive(Deserialize)]
        struct Frame {
            error: Error,
        }
        return match serde_json::from_slice::<Frame>(frame) {
            Ok(f) => Outcome::Code(f.error.code, f.error.message),
            Err(_) => Outcome::Code(-32603, None),
        };
    }
    if method == "tools/call" {
        let tail = &frame[frame.len().saturating_sub(4096)..];
        if memchr::memmem::find(tail, b"\"isError\":true").is_some() {
            return Outcome::ToolError;
        }
    }
    Outcome::Ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_are_read_off_the_frames() {
        let ok = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\"error\":{\"code\":1}"}]}}"#;
        assert_eq!(outcome("tools/call", ok), Outcome::Ok);
        let error = br#"{"jsonrpc":"2.0","id":"a,\"error\":{\"code\":","error":{"code":-32602,"message":"bad"}}"#;
        assert_eq!(
            outcome("tools/call", error),
            Outcome::Code(-32602, Some("bad".into()))
        );
        let failed =
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true,"_meta":{}}}"#;
        assert_eq!(outcome("tools/call", failed), Outcome::ToolError);
        assert_eq!(outcome("prompts/get", failed), Outcome::Ok);
    }
}
