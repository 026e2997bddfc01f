//! One record per tool call — when, who, which tool, a digest of its arguments, how it
//! ended and how long it took — handed to an [`Audit`] sink: by default a `tracing` event
//! (target `mcp_runtime::audit`, level `INFO`), so it lands wherever the program's logs go
//! (`MCP_LOG=info` on the built-in standard-error logger).

use std::time::Duration;

use sha2::{Digest, Sha256};

/// How a call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A result.
    Ok,
    /// A tool error (`isError: true`), the model's to read.
    ToolError,
    /// A JSON-RPC error (a defect of the server, a missing client capability).
    ProtocolError,
    /// Refused by the server's [`Policy`](crate::policy::Policy).
    Denied,
    /// Cancelled by the client (or its connection closed) before it ended.
    Cancelled,
    /// A stateless request that needs the client's input first: this round ended with an
    /// `InputRequiredResult`, and the retry is a call of its own.
    InputRequired,
}

impl Outcome {
    /// The outcome as a word: `ok`, `tool_error`, `protocol_error`, `denied`, `cancelled`,
    /// `input_required`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::ToolError => "tool_error",
            Outcome::ProtocolError => "protocol_error",
            Outcome::Denied => "denied",
            Outcome::Cancelled => "cancelled",
            Outcome::InputRequired => "input_required",
        }
    }
}

/// One tool call, once it ended.
#[derive(Clone, Debug)]
pub struct AuditRecord<'a> {
    /// When it began, ISO 8601 in UTC.
    pub time: String,
    /// The caller's authenticated subject, if the transport has one.
    pub caller: Option<&'a str>,
    /// The tool.
    pub tool: &'a str,
    /// The first 16 bytes of the SHA-256 of the arguments as sent, in hex: which call it
    /// was, without what it carried.
    pub arguments_digest: &'a str,
    /// How it ended.
    pub outcome: Outcome,
    /// The stage of the policy that refused it, for [`Outcome::Denied`].
    pub refused_by: Option<&'a str>,
    /// How long it ran.
    pub duration: Duration,
    /// The trace the call belongs to (32 hex digits): its span's with the `otel` feature,
    /// else the `traceparent` the client sent in the request's `_meta`.
    pub trace_id: Option<&'a str>,
}

/// Where audit records go. Implement it to keep them in a store of your own.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use mcp_runtime::audit::{Audit, AuditRecord};
///
/// #[derive(Default)]
/// struct Kept(Mutex<Vec<String>>);
///
/// impl Audit for Kept {
///     fn record(&self, record: &AuditRecord<'_>) {
///         self.0.lock().unwrap().push(format!("{} {}", record.tool, record.outcome.as_str()));
///     }
/// }
///
/// let server = mcp_runtime::server!()
///     .auto_register(false)
///     .audit(Arc::new(Kept::default()))
///     .build()
///     .unwrap();
/// # let _ = server;
/// ```
pub trait Audit: Send + Sync + 'static {
    /// Whether records are wanted at all (the digest is not computed otherwise).
    fn enabled(&self) -> bool {
        true
    }

    /// Takes one record.
    fn record(&self, record: &AuditRecord<'_>);
}

/// The default sink: a `tracing` event per call, target `mcp_runtime::audit`, level `INFO`.
#[derive(Clone, Copy, Debug, Default)]
pub struct TracingAudit;

impl Audit for TracingAudit {
    fn enabled(&self) -> bool {
        tracing::enabled!(target: "mcp_runtime::audit", tracing::Level::INFO)
    }

    fn record(&self, r: &AuditRecord<'_>) {
        tracing::info!(
            target: "mcp_runtime::audit",
            time = %r.time,
            caller = r.caller.unwrap_or("-"),
            tool = r.tool,
            arguments = r.arguments_digest,
            outcome = r.outcome.as_str(),
            refused_by = r.refused_by.unwrap_or("-"),
            trace_id = r.trace_id.unwrap_or("-"),
            duration_ms = r.duration.as_secs_f64() * 1e3,
            "tool call"
        );
    }
}

/// The digest of a call's arguments as they were sent.
pub(crate) fn digest(arguments: &str) -> String {
    Sha256::digest(arguments.as_bytes())[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// One call being audited: recorded once it ends, or as cancelled if it is dropped first.
pub(crate) struct AuditCall {
    sink: std::sync::Arc<dyn Audit>,
    time: String,
    caller: Option<String>,
    tool: &'static str,
    digest: String,
    trace_id: Option<String>,
    started: std::time::Instant,
    done: bool,
}

impl AuditCall {
    /// Starts auditing a call, when the sink wants records; `traceparent` reads the W3C
    /// trace context the request carries, if any.
    pub(crate) fn begin(
        sink: &std::sync::Arc<dyn Audit>,
        tool: &'static str,
        caller: Option<&str>,
        arguments: Option<&str>,
        traceparent: impl FnOnce() -> Option<String>,
    ) -> Option<AuditCall> {
        if !sink.enabled() {
            return None;
        }
        Some(AuditCall {
            sink: std::sync::Arc::clone(sink),
            time: crate::tasks::iso8601(crate::tasks::now_ms()),
            caller: caller.map(str::to_owned),
            tool,
            digest: digest(arguments.unwrap_or("{}")),
            trace_id: crate::telemetry::trace_id(traceparent),
            started: std::time::Instant::now(),
            done: false,
        })
    }

    /// Records how the call ended.
    pub(crate) fn end(mut self, outcome: Outcome, refused_by: Option<&str>) {
        self.record(outcome, refused_by);
    }

    fn record(&mut self, outcome: Outcome, refused_by: Option<&str>) {
        self.done = true;
        self.sink.record(&AuditRecord {
            time: std::mem::take(&mut self.time),
            caller: self.caller.as_deref(),
            tool: self.tool,
            arguments_digest: &self.digest,
            outcome,
            refused_by,
            duration: self.started.elapsed(),
            trace_id: self.trace_id.as_deref(),
        });
    }
}

impl Drop for AuditCall {
    fn drop(&mut self) {
        if !self.done {
            self.record(Outcome::Cancelled, None);
        }
    }
}
