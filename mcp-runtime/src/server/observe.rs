//! Each request as an operator sees it: counted and timed in the server's [`Metrics`], and
//! (feature `otel`) a span of its own, parented on the caller's trace. Nothing is done when
//! neither is on.

use std::borrow::Cow;
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
/// `prompts/get` (`gen_ai.tool.name`, `gen_ai.prompt.name`), as the catalogue holds it.
pub(crate) type Target = Option<(&'static str, &'static str)>;

/// What the request names, read from its parameters.
#[derive(Default, Deserialize)]
pub(crate) struct Named<'a> {
    #[serde(default, borrow)]
    pub name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub uri: Option<Cow<'a, str>>,
    /// The caller's trace context, for the span.
    #[serde(rename = "_meta", default, borrow)]
    pub meta: Option<crate::telemetry::TraceMeta<'a>>,
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

    /// Whether requests are observed: metrics kept, or spans made.
    #[inline]
    pub(super) fn observing(&self) -> bool {
        self.metrics().is_enabled() || crate::telemetry::tracing_on()
    }

    /// Serves a request (`serve`), observed (metrics or tracing are on).
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
        // `subscriptions/listen` is a stream that lasts as long as the client wants, not an
        // operation: timing it would only fill the top bucket and the in-flight gauge.
        if name == "subscriptions/listen" {
            return serve();
        }
        let started = Instant::now();
        // A method nobody serves is counted as one (`_OTHER`, as the OpenTelemetry
        // conventions name it): names made up by a client do not become series of their own.
        let method: Cow<'static, str> = match Method::parse(name) {
            Some(method) => Cow::Borrowed(method.name()),
            None if self.has_custom_method(name) => Cow::Owned(name.to_owned()),
            None => Cow::Borrowed(OTHER),
        };
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
        // Only a tool or prompt the server has is named: any other name is the client's to
        // choose, as long as it likes, and would grow the metrics and the spans.
        let catalogue = self.catalogue();
        let target: Target = match (name, named.name.as_deref()) {
            ("tools/call", Some(tool)) => Some((
                "gen_ai.tool.name",
                catalogue.tool(tool).map_or(OTHER, |t| t.descriptor.name),
            )),
            ("prompts/get", Some(prompt)) => Some((
                "gen_ai.prompt.name",
                catalogue
                    .prompt(prompt)
                    .map_or(OTHER, |p| p.descriptor.name),
            )),
            _ => None,
        };
        drop(catalogue);
        let mut ending = Ending {
            metrics: metrics.then(|| self.clone()),
            started,
            method,
            target,
            span: None,
            done: false,
        };
        if metrics {
            self.metrics().started();
        }
        if tracing {
            ending.span = crate::telemetry::start_span(
                session,
                id,
                &ending.method,
                ending.target,
                named.uri.as_deref(),
                named.meta.as_ref(),
                channel,
            );
        }
        // A panic while serving drops `ending`, which records the request as cancelled.
        let routed = match &ending.span {
            Some(span) => span.in_scope(serve),
            None => serve(),
        };
        match routed {
            Routed::Reply(frame) => {
                ending.end(id, frame.as_deref());
                Routed::Reply(frame)
            }
            Routed::Deferred(work) => {
                let work = match &ending.span {
                    Some(span) => span.around(work),
                    None => work,
                };
                let id = id.clone();
                Routed::Deferred(Box::pin(async move {
                    let frame = work.await;
                    ending.end(&id, frame.as_deref());
                    frame
                }))
            }
        }
    }
}

/// The name of whatever is counted together: methods nobody serves, tools and prompts the
/// server does not have.
const OTHER: &str = "_OTHER";

/// A request being observed, recorded once its response is known, or as `cancelled` if
/// it is dropped first.
struct Ending {
    metrics: Option<Server>,
    started: Instant,
    method: Cow<'static, str>,
    target: Target,
    span: Option<crate::telemetry::RequestSpan>,
    done: bool,
}

impl Ending {
    /// Records the request's end: a request answered with no frame was cancelled.
    fn end(mut self, id: &RequestId, frame: Option<&[u8]>) {
        let outcome = frame.map_or(Outcome::Cancelled, |f| outcome(&self.method, id, f));
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
                    target: self.target,
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
/// `{"jsonrpc":"2.0","id":<id>,` and then `"result"` or `"error":{"code":N`, so only that
/// place is looked at; and for a tool call, the tail (`isError` is the result's last member
/// but `_meta`).
fn outcome(method: &str, id: &RequestId, frame: &[u8]) -> Outcome {
    const HEAD: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":";
    let id = serde_json::to_vec(id).unwrap_or_default();
    let after_id = frame
        .strip_prefix(HEAD)
        .and_then(|rest| rest.strip_prefix(id.as_slice()));
    if after_id.is_some_and(|rest| rest.starts_with(b",\"error\":")) {
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
        let one = RequestId::Number(1);
        let ok = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\"error\":{\"code\":1}"}]}}"#;
        assert_eq!(outcome("tools/call", &one, ok), Outcome::Ok);
        let long = RequestId::String(format!("a,\"error\":{{\"code\":{}", "x".repeat(700)).into());
        let error = format!(
            r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32602,"message":"bad"}}}}"#,
            serde_json::to_string(&long).unwrap()
        );
        assert_eq!(
            outcome("tools/call", &long, error.as_bytes()),
            Outcome::Code(-32602, Some("bad".into())),
            "however long the id"
        );
        let failed =
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true,"_meta":{}}}"#;
        assert_eq!(outcome("tools/call", &one, failed), Outcome::ToolError);
        assert_eq!(outcome("prompts/get", &one, failed), Outcome::Ok);
    }
}
