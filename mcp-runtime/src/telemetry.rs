//! A span per request (feature `otel`, once [`otel::Otlp::install`](crate::otel::Otlp::install)
//! ran), following the OpenTelemetry semantic conventions for MCP servers; and the trace a
//! request belongs to, for the audit record, with or without the feature.

use std::borrow::Cow;

use serde::Deserialize;

/// The W3C trace context a request carries in `params._meta` (SEP-414: the keys unprefixed).
#[derive(Default, Deserialize)]
pub(crate) struct TraceMeta<'a> {
    #[serde(default, borrow)]
    pub traceparent: Option<Cow<'a, str>>,
    #[cfg_attr(not(feature = "otel"), allow(dead_code))]
    #[serde(default, borrow)]
    pub tracestate: Option<Cow<'a, str>>,
}

#[derive(Default, Deserialize)]
struct WithMeta<'a> {
    #[serde(rename = "_meta", default, borrow)]
    meta: Option<TraceMeta<'a>>,
}

/// The trace id (32 hex digits) of a request: its span's when requests are traced, else
/// that of the `traceparent` it carries (read by `traceparent`), if valid.
pub(crate) fn trace_id(traceparent: impl FnOnce() -> Option<String>) -> Option<String> {
    #[cfg(feature = "otel")]
    if let Some(id) = imp::current_trace_id() {
        return Some(id);
    }
    traceparent_trace_id(&traceparent()?)
}

/// The `traceparent` of a request's raw parameters (`_meta.traceparent`).
pub(crate) fn traceparent_of(params: Option<&str>) -> Option<String> {
    serde_json::from_str::<WithMeta<'_>>(params?)
        .ok()?
        .meta?
        .traceparent
        .map(Cow::into_owned)
}

/// The trace id of a W3C `traceparent` (`00-<32 hex>-<16 hex>-<2 hex>`), unless it is
/// malformed or all zeros.
pub(crate) fn traceparent_trace_id(value: &str) -> Option<String> {
    let parts: Vec<&str> = value.trim().split('-').collect();
    let [version, trace, parent, flags, rest @ ..] = parts.as_slice() else {
        return None;
    };
    // Lowercase hex only, as W3C Trace Context says; version 00 has exactly four fields.
    let hex = |s: &str, n: usize| {
        s.len() == n
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    let valid = hex(version, 2)
        && *version != "ff"
        && (*version != "00" || rest.is_empty())
        && hex(trace, 32)
        && hex(parent, 16)
        && hex(flags, 2)
        && trace.bytes().any(|b| b != b'0')
        && parent.bytes().any(|b| b != b'0');
    valid.then(|| (*trace).to_owned())
}

pub(crate) use imp::{RequestSpan, start_span, tracing_on};

#[cfg(not(feature = "otel"))]
mod imp {
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Arc;

    use crate::protocol::RequestId;
    use crate::session::{RequestChannel, Session};

    /// No span can exist without the feature.
    pub(crate) enum RequestSpan {}

    type Work = Pin<Box<dyn Future<Output = Option<Vec<u8>>> + Send + 'static>>;

    impl RequestSpan {
        pub(crate) fn in_scope<R>(&self, _: impl FnOnce() -> R) -> R {
            match *self {}
        }
        pub(crate) fn around(&self, _: Work) -> Work {
            match *self {}
        }
        pub(crate) fn end(self, _: Option<&str>, _: Option<&str>) {
            match self {}
        }
    }

    pub(crate) fn tracing_on() -> bool {
        false
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn start_span(
        _: &Arc<Session>,
        _: &RequestId,
        _: &str,
        _: Option<(&'static str, &'static str)>,
        _: Option<&str>,
        _: Option<&super::TraceMeta<'_>>,
        _: &RequestChannel,
    ) -> Option<RequestSpan> {
        None
    }
}

#[cfg(feature = "otel")]
mod imp {
    use std::borrow::Cow;
    use std::collections::HashMap;
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::{Arc, OnceLock};

    use opentelemetry::propagation::{Extractor, TextMapPropagator};
    use opentelemetry::trace::{
        FutureExt as _, SpanKind, Status, TraceContextExt as _, Tracer as _,
    };
    use opentelemetry::{Context, KeyValue};
    use opentelemetry_sdk::propagation::TraceContextPropagator;
    use sha2::{Digest, Sha256};

    use crate::protocol::RequestId;
    use crate::session::{RequestChannel, Session};

    /// The tracer of the runtime's request spans, once `Otlp::install` made one.
    static TRACER: OnceLock<opentelemetry_sdk::trace::SdkTracer> = OnceLock::new();

    pub(crate) fn install(tracer: opentelemetry_sdk::trace::SdkTracer) {
        let _ = TRACER.set(tracer);
    }

    pub(crate) fn tracing_on() -> bool {
        TRACER.get().is_some()
    }

    pub(crate) fn current_trace_id() -> Option<String> {
        let cx = Context::current();
        let span = cx.span();
        let context = span.span_context();
        context.is_valid().then(|| context.trace_id().to_string())
    }

    /// The most bytes of a client's text a span carries in one attribute or in its status. A
    /// request id, a URI or a name is as long as the client likes: unbounded, one request
    /// would make an export of megabytes, which a collector refuses whole, with the spans of
    /// every other request in it.
    const MAX_CLIENT_TEXT: usize = 512;

    /// `text` as a span carries it: whole if it fits [`MAX_CLIENT_TEXT`], else cut at a
    /// character boundary and ended with `…`, so a reader knows there was more.
    fn bounded(text: &str) -> Cow<'_, str> {
        const MARK: &str = "…";
        if text.len() <= MAX_CLIENT_TEXT {
            return Cow::Borrowed(text);
        }
        let mut end = MAX_CLIENT_TEXT - MARK.len();
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        Cow::Owned(format!("{}{MARK}", &text[..end]))
    }

    /// The span of one request, and the context its handler runs in.
    pub(crate) struct RequestSpan {
        cx: Context,
    }

    type Work = Pin<Box<dyn Future<Output = Option<Vec<u8>>> + Send + 'static>>;

    impl RequestSpan {
        /// Runs `f` with the span as the current context (the synchronous part of serving).
        pub(crate) fn in_scope<R>(&self, f: impl FnOnce() -> R) -> R {
            let _attached = self.cx.clone().attach();
            f()
        }

        /// The handler's work, run with the span as its context: spans it starts are the
        /// request's children.
        pub(crate) fn around(&self, work: Work) -> Work {
            Box::pin(work.with_context(self.cx.clone()))
        }

        /// Ends the span: `error.type` and an error status when the request failed. The
        /// status is the error's message, which may quote the client ("unknown tool `…`"),
        /// so it is bounded.
        pub(crate) fn end(self, error: Option<&str>, message: Option<&str>) {
            let span = self.cx.span();
            if let Some(error) = error {
                span.set_attribute(KeyValue::new("error.type", error.to_owned()));
                if error.parse::<i64>().is_ok() {
                    span.set_attribute(KeyValue::new("rpc.response.status_code", error.to_owned()));
                }
                span.set_status(Status::error(
                    bounded(message.unwrap_or(error)).into_owned(),
                ));
            }
            span.end();
        }
    }

    struct Carrier<'a>(HashMap<&'static str, &'a str>);

    impl Extractor for Carrier<'_> {
        fn get(&self, key: &str) -> Option<&str> {
            self.0.get(key).copied()
        }
        fn keys(&self) -> Vec<&str> {
            self.0.keys().copied().collect()
        }
    }

    /// The caller's trace context: `params._meta` first (the MCP convention), else the HTTP
    /// request's `traceparent` header.
    fn parent(meta: Option<&super::TraceMeta<'_>>, channel: &RequestChannel) -> Context {
        let mut carrier = HashMap::new();
        if let Some(meta) = meta
            && let Some(traceparent) = meta.traceparent.as_deref()
        {
            carrier.insert("traceparent", traceparent);
            if let Some(state) = meta.tracestate.as_deref() {
                carrier.insert("tracestate", state);
            }
        } else if let Some(http) = &channel.http {
            for name in ["traceparent", "tracestate"] {
                if let Some(value) = http.headers().get(name).and_then(|v| v.to_str().ok()) {
                    carrier.insert(name, value);
                }
            }
        }
        if carrier.is_empty() {
            return Context::new();
        }
        TraceContextPropagator::new().extract(&Carrier(carrier))
    }

    /// Starts the span of a request, named `{mcp.method.name} {target}`.
    pub(crate) fn start_span(
        session: &Arc<Session>,
        id: &RequestId,
        method: &str,
        target: Option<(&'static str, &'static str)>,
        uri: Option<&str>,
        meta: Option<&super::TraceMeta<'_>>,
        channel: &RequestChannel,
    ) -> Option<RequestSpan> {
        let tracer = TRACER.get()?;
        Some(start_span_with(
            tracer, session, id, method, target, uri, meta, channel,
        ))
    }

    #[allow(clippy::too_many_arguments)]
    fn start_span_with(
        tracer: &opentelemetry_sdk::trace::SdkTracer,
        session: &Arc<Session>,
        id: &RequestId,
        method: &str,
        target: Option<(&'static str, &'static str)>,
        uri: Option<&str>,
        meta: Option<&super::TraceMeta<'_>>,
        channel: &RequestChannel,
    ) -> RequestSpan {
        let parent = parent(meta, channel);
        let name = match target {
            Some((_, name)) => format!("{method} {name}"),
            None => method.to_owned(),
        };
        let mut attributes = vec![
            KeyValue::new("mcp.method.name", method.to_owned()),
            KeyValue::new("jsonrpc.request.id", bounded(&request_id(id)).into_owned()),
            KeyValue::new(
                "network.transport",
                if channel.http.is_some() {
                    "tcp"
                } else {
                    "pipe"
                },
            ),
        ];
        if channel.http.is_some() {
            attributes.push(KeyValue::new("network.protocol.name", "http"));
        }
        if let Some((key, name)) = target {
            attributes.push(KeyValue::new(key, name));
            if key == "gen_ai.tool.name" {
                attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
            }
        }
        if let Some(uri) = uri {
            attributes.push(KeyValue::new("mcp.resource.uri", bounded(uri).into_owned()));
        }
        if let Some(negotiated) = session.negotiated() {
            attributes.push(KeyValue::new(
                "mcp.protocol.version",
                negotiated.version.as_str(),
            ));
        }
        // The session id lets whoever holds it act in the session: spans carry a digest of
        // it, which tells sessions apart without handing them to the tracing backend.
        if session.is_session()
            && let Some(key) = session.key()
        {
            let digest = Sha256::digest(key.as_bytes());
            let short: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
            attributes.push(KeyValue::new("mcp.session.id", short));
        }
        let span = tracer
            .span_builder(name)
            .with_kind(SpanKind::Server)
            .with_attributes(attributes)
            .start_with_context(tracer, &parent);
        RequestSpan {
            cx: parent.with_span(span),
        }
    }

    fn request_id(id: &RequestId) -> String {
        match serde_json::to_value(id) {
            Ok(serde_json::Value::String(text)) => text,
            Ok(other) => other.to_string(),
            Err(_) => String::new(),
        }
    }

    #[cfg(test)]
    mod tests {
        use std::sync::Mutex;
        use std::time::Duration;

        use opentelemetry::trace::TracerProvider as _;
        use opentelemetry_sdk::error::OTelSdkResult;
        use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanProcessor};

        use super::*;
        use crate::session::Outbound;

        /// Keeps the spans ended.
        #[derive(Clone, Debug, Default)]
        struct Ended(Arc<Mutex<Vec<SpanData>>>);

        impl SpanProcessor for Ended {
            fn on_start(&self, _: &mut opentelemetry_sdk::trace::Span, _: &Context) {}
            fn on_end(&self, span: SpanData) {
                self.0.lock().unwrap().push(span);
            }
            fn force_flush(&self) -> OTelSdkResult {
                Ok(())
            }
            fn shutdown_with_timeout(&self, _: Duration) -> OTelSdkResult {
                Ok(())
            }
        }

        #[test]
        fn a_clients_text_is_cut_at_a_character_and_marked() {
            assert_eq!(bounded("héllo"), "héllo");
            let ascii = bounded(&"x".repeat(1000)).into_owned();
            assert_eq!(ascii, format!("{}…", "x".repeat(509)));
            // 2-byte characters: 508 bytes of them fit with the mark, not 509.
            let accented = bounded(&"é".repeat(300)).into_owned();
            assert_eq!(accented, format!("{}…", "é".repeat(254)));
        }

        #[test]
        fn a_clients_text_is_cut_in_the_span() {
            let ended = Ended::default();
            let provider = SdkTracerProvider::builder()
                .with_span_processor(ended.clone())
                .build();
            let tracer = provider.tracer("test");
            let session = Arc::new(Session::new(Outbound::new().0));
            let channel = RequestChannel::new(Outbound::new().0);
            let long = "é".repeat(100_000);
            let span = start_span_with(
                &tracer,
                &session,
                &RequestId::String(long.as_str().into()),
                "resources/read",
                None,
                Some(&long),
                None,
                &channel,
            );
            span.end(Some("-32602"), Some(&format!("unknown resource `{long}`")));
            let spans = ended.0.lock().unwrap();
            let cut = |text: &str, what: &str| {
                assert!(text.len() <= 512, "{what}: {} bytes", text.len());
                assert!(text.ends_with("é…"), "{what} is marked as cut");
            };
            for key in ["jsonrpc.request.id", "mcp.resource.uri"] {
                let value = spans[0]
                    .attributes
                    .iter()
                    .find(|kv| kv.key.as_str() == key)
                    .map(|kv| kv.value.as_str().into_owned())
                    .unwrap_or_else(|| panic!("no {key}"));
                cut(&value, key);
            }
            let Status::Error { description } = &spans[0].status else {
                panic!("{:?}", spans[0].status);
            };
            assert!(description.starts_with("unknown resource `é"));
            cut(description, "the status");
        }
    }
}

#[cfg(feature = "otel")]
pub(crate) use imp::install;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_traceparent_names_its_trace_unless_malformed() {
        assert_eq!(
            traceparent_trace_id("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
                .as_deref(),
            Some("4bf92f3577b34da6a3ce929d0e0e4736")
        );
        for bad in [
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473x-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "garbage",
        ] {
            assert_eq!(traceparent_trace_id(bad), None, "{bad}");
        }
        let params = r#"{"name":"x","_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}"#;
        assert_eq!(
            trace_id(|| traceparent_of(Some(params))).as_deref(),
            Some("4bf92f3577b34da6a3ce929d0e0e4736")
        );
        assert_eq!(trace_id(|| traceparent_of(Some(r#"{"name":"x"}"#))), None);
    }
}
