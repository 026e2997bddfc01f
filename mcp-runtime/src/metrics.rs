//! What the server is doing, in numbers: requests by method, target and outcome with their
//! durations, requests in flight, live sessions, and notifications dropped for peers that do
//! not read. Kept once [enabled](Metrics::enable) (a metrics route, or OpenTelemetry, turns
//! it on), and read as the Prometheus text format ([`Metrics::render_prometheus`]) or
//! exported through OpenTelemetry (feature `otel`).
//!
//! The names follow the OpenTelemetry semantic conventions for MCP servers:
//!
//! | Prometheus | OpenTelemetry | What |
//! |---|---|---|
//! | `mcp_server_operation_duration_seconds` (histogram) | `mcp.server.operation.duration` | Each request, from its arrival to its response; labels `mcp_method_name`, `gen_ai_tool_name` / `gen_ai_prompt_name`, `error_type` (the JSON-RPC error code, or `tool_error`, absent on success) |
//! | `mcp_server_requests_in_flight` (gauge) | `mcp.server.requests.in_flight` | Requests being served now |
//! | `mcp_server_sessions` (gauge) | `mcp.server.sessions` | Live sessions (connections over stdio) |
//! | `mcp_server_notifications_dropped_total` (counter) | `mcp.server.notifications.dropped` | Notifications dropped because the peer was not reading |

use std::collections::HashMap;
use std::fmt::Write as _;
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// The upper bounds of the duration histogram's buckets, in seconds: from a tenth of a
/// millisecond (a request served in process) to five minutes (a long tool call).
pub const DURATION_BUCKETS: [f64; 18] = [
    0.0001, 0.0005, 0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0,
    120.0, 300.0,
];

/// The most series of the duration histogram kept; requests beyond them are counted under
/// the target `_OTHER`, so made-up tool names cannot grow the metrics without bound.
pub const MAX_SERIES: usize = 2000;

/// The server's metrics. Every [`Server`](crate::Server) has one
/// ([`Server::metrics`](crate::Server::metrics)); nothing is kept until it is enabled.
///
/// ```
/// let server = mcp_runtime::server!().auto_register(false).build().unwrap();
/// server.metrics().enable();
/// let text = server.metrics().render_prometheus(server.session_count());
/// assert!(text.contains("mcp_server_requests_in_flight 0"));
/// ```
#[derive(Default)]
pub struct Metrics {
    enabled: AtomicBool,
    series: RwLock<HashMap<u64, Vec<Arc<Series>>, BuildHasherDefault<NoHash>>>,
    series_count: AtomicU64,
    in_flight: AtomicI64,
    /// The OpenTelemetry histogram requests are recorded in too, once exporting.
    #[cfg(feature = "otel")]
    histogram: std::sync::OnceLock<opentelemetry::metrics::Histogram<f64>>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics")
            .field("enabled", &self.is_enabled())
            .field("in_flight", &self.in_flight())
            .finish_non_exhaustive()
    }
}

/// Notifications dropped for peers that were not reading, in the whole process.
static DROPPED: AtomicU64 = AtomicU64::new(0);

/// One labelled series of the duration histogram.
#[derive(Debug)]
struct Series {
    method: Box<str>,
    target: Option<(&'static str, &'static str)>,
    error: Option<Box<str>>,
    buckets: [AtomicU64; DURATION_BUCKETS.len()],
    count: AtomicU64,
    sum_nanos: AtomicU64,
}

/// The hash of a series' labels is its key already.
#[derive(Default)]
struct NoHash(u64);

impl std::hash::Hasher for NoHash {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// What a finished request is counted as.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Labels<'a> {
    pub method: &'a str,
    /// `gen_ai.tool.name` or `gen_ai.prompt.name`, and the name as the catalogue holds it
    /// (or `_OTHER`).
    pub target: Option<(&'static str, &'static str)>,
    /// `error.type`: a JSON-RPC error code, or `tool_error`.
    pub error: Option<&'a str>,
}

impl Metrics {
    /// Starts keeping metrics (idempotent). Until then, serving a request costs nothing here.
    pub fn enable(&self) {
        self.enabled.store(true, Ordering::Relaxed);
    }

    /// Whether metrics are kept.
    pub fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    pub(crate) fn started(&self) {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn finished(&self, labels: Labels<'_>, took: Duration) {
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
        let series = self.series(labels);
        let seconds = took.as_secs_f64();
        if let Some(i) = DURATION_BUCKETS.iter().position(|&le| seconds <= le) {
            series.buckets[i].fetch_add(1, Ordering::Relaxed);
        }
        series.count.fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        series.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
        #[cfg(feature = "otel")]
        if let Some(histogram) = self.histogram.get() {
            let mut attributes = vec![opentelemetry::KeyValue::new(
                "mcp.method.name",
                series.method.to_string(),
            )];
            if let Some((key, name)) = series.target {
                attributes.push(opentelemetry::KeyValue::new(key, name));
            }
            if let Some(error) = &series.error {
                attributes.push(opentelemetry::KeyValue::new(
                    "error.type",
                    error.to_string(),
                ));
            }
            histogram.record(seconds, &attributes);
        }
    }

    /// A notification was dropped because its peer was not reading.
    pub(crate) fn notification_dropped() {
        DROPPED.fetch_add(1, Ordering::Relaxed);
    }

    #[cfg(feature = "otel")]
    pub(crate) fn set_histogram(&self, histogram: opentelemetry::metrics::Histogram<f64>) {
        let _ = self.histogram.set(histogram);
    }

    /// Requests being served now.
    pub fn in_flight(&self) -> i64 {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// Notifications dropped so far because their peer was not reading (by every server of
    /// the process).
    pub fn notifications_dropped(&self) -> u64 {
        DROPPED.load(Ordering::Relaxed)
    }

    fn series(&self, labels: Labels<'_>) -> Arc<Series> {
        let labels = if self.series_count.load(Ordering::Relaxed) >= MAX_SERIES as u64
            && labels.target.is_some()
            && self.find(labels).is_none()
        {
            Labels {
                target: labels.target.map(|(key, _)| (key, "_OTHER")),
                ..labels
            }
        } else {
            labels
        };
        if let Some(found) = self.find(labels) {
            return found;
        }
        let mut series = self.series.write().unwrap_or_else(|p| p.into_inner());
        let entries = series.entry(key(labels)).or_default();
        if let Some(found) = entries.iter().find(|s| s.is(labels)) {
            return Arc::clone(found);
        }
        let made = Arc::new(Series {
            method: labels.method.into(),
            target: labels.target,
            error: labels.error.map(Into::into),
            buckets: Default::default(),
            count: AtomicU64::new(0),
            sum_nanos: AtomicU64::new(0),
        });
        entries.push(Arc::clone(&made));
        self.series_count.fetch_add(1, Ordering::Relaxed);
        made
    }

    fn find(&self, labels: Labels<'_>) -> Option<Arc<Series>> {
        let series = self.series.read().unwrap_or_else(|p| p.into_inner());
        series
            .get(&key(labels))?
            .iter()
            .find(|s| s.is(labels))
            .cloned()
    }

    /// Every series of the duration histogram: labels, bucket counts, count, sum in seconds.
    pub(crate) fn each_series(&self, mut each: impl FnMut(Labels<'_>, &[u64], u64, f64)) {
        let series = self.series.read().unwrap_or_else(|p| p.into_inner());
        for s in series.values().flatten() {
            let buckets: Vec<u64> = s
                .buckets
                .iter()
                .map(|b| b.load(Ordering::Relaxed))
                .collect();
            each(
                s.labels(),
                &buckets,
                s.count.load(Ordering::Relaxed),
                s.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9,
            );
        }
    }

    /// The metrics in the Prometheus text exposition format (version 0.0.4), with
    /// `sessions` as the live sessions' gauge.
    pub fn render_prometheus(&self, sessions: usize) -> String {
        let mut out = String::with_capacity(4096);
        out.push_str(
            "# HELP mcp_server_operation_duration_seconds MCP requests, from arrival to response, by method, target and outcome.\n\
             # TYPE mcp_server_operation_duration_seconds histogram\n",
        );
        let mut all: Vec<(String, Vec<u64>, u64, f64)> = Vec::new();
        self.each_series(|labels, buckets, count, sum| {
            all.push((label_text(labels), buckets.to_vec(), count, sum));
        });
        all.sort_by(|a, b| a.0.cmp(&b.0));
        for (labels, buckets, count, sum) in &all {
            let mut cumulative = 0;
            for (le, n) in DURATION_BUCKETS.iter().zip(buckets) {
                cumulative += n;
                let _ = writeln!(
                    out,
                    "mcp_server_operation_duration_seconds_bucket{{{labels},le=\"{le}\"}} {cumulative}"
                );
            }
            let _ = writeln!(
                out,
                "mcp_server_operation_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {count}"
            );
            let _ = writeln!(
                out,
                "mcp_server_operation_duration_seconds_sum{{{labels}}} {sum}"
            );
            let _ = writeln!(
                out,
                "mcp_server_operation_duration_seconds_count{{{labels}}} {count}"
            );
        }
        let _ = write!(
            out,
            "# HELP mcp_server_requests_in_flight MCP requests being served now.\n\
             # TYPE mcp_server_requests_in_flight gauge\n\
             mcp_server_requests_in_flight {}\n\
             # HELP mcp_server_sessions Live MCP sessions (connections over stdio).\n\
             # TYPE mcp_server_sessions gauge\n\
             mcp_server_sessions {sessions}\n\
             # HELP mcp_server_notifications_dropped_total Notifications dropped because the peer was not reading.\n\
             # TYPE mcp_server_notifications_dropped_total counter\n\
             mcp_server_notifications_dropped_total {}\n",
            self.in_flight().max(0),
            self.notifications_dropped(),
        );
        out
    }
}

impl Series {
    fn is(&self, labels: Labels<'_>) -> bool {
        *self.method == *labels.method
            && self.error.as_deref() == labels.error
            && self.target == labels.target
    }

    fn labels(&self) -> Labels<'_> {
        Labels {
            method: &self.method,
            target: self.target,
            error: self.error.as_deref(),
        }
    }
}

fn key(labels: Labels<'_>) -> u64 {
    let hasher = BuildHasherDefault::<DefaultHasher>::default();
    hasher.hash_one((labels.method, labels.target, labels.error))
}

/// The Prometheus labels of a series: the attribute names with `.` as `_`.
fn label_text(labels: Labels<'_>) -> String {
    let mut text = format!("mcp_method_name=\"{}\"", escape(labels.method));
    if let Some((key, name)) = labels.target {
        let _ = write!(text, ",{}=\"{}\"", key.replace('.', "_"), escape(name));
    }
    if let Some(error) = labels.error {
        let _ = write!(text, ",error_type=\"{}\"", escape(error));
    }
    text
}

/// A label value as the text format quotes it.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_counted_by_labels_and_rendered_as_prometheus_text() {
        let metrics = Metrics::default();
        metrics.enable();
        let call = Labels {
            method: "tools/call",
            target: Some(("gen_ai.tool.name", "add")),
            error: None,
        };
        for took in [50, 300, 5_000] {
            metrics.started();
            metrics.finished(call, Duration::from_micros(took));
        }
        metrics.started();
        metrics.finished(
            Labels {
                error: Some("-32602"),
                ..call
            },
            Duration::from_millis(2),
        );
        metrics.started();
        let text = metrics.render_prometheus(3);
        assert!(text.contains(
            "mcp_server_operation_duration_seconds_bucket{mcp_method_name=\"tools/call\",gen_ai_tool_name=\"add\",le=\"0.0001\"} 1\n"
        ), "{text}");
        assert!(text.contains(
            "mcp_server_operation_duration_seconds_bucket{mcp_method_name=\"tools/call\",gen_ai_tool_name=\"add\",le=\"0.005\"} 3\n"
        ), "{text}");
        assert!(text.contains(
            "mcp_server_operation_duration_seconds_count{mcp_method_name=\"tools/call\",gen_ai_tool_name=\"add\",error_type=\"-32602\"} 1\n"
        ), "{text}");
        assert!(text.contains("mcp_server_requests_in_flight 1\n"), "{text}");
        assert!(text.contains("mcp_server_sessions 3\n"), "{text}");
    }

    #[test]
    fn made_up_names_beyond_the_series_cap_are_counted_together() {
        let metrics = Metrics::default();
        for n in 0..MAX_SERIES + 50 {
            let name: &'static str = Box::leak(format!("tool{n}").into_boxed_str());
            metrics.started();
            metrics.finished(
                Labels {
                    method: "tools/call",
                    target: Some(("gen_ai.tool.name", name)),
                    error: Some("-32602"),
                },
                Duration::from_micros(1),
            );
        }
        let text = metrics.render_prometheus(0);
        assert!(text.contains(
            "mcp_server_operation_duration_seconds_count{mcp_method_name=\"tools/call\",gen_ai_tool_name=\"_OTHER\",error_type=\"-32602\"} 50\n"
        ), "{text}");
    }

    #[test]
    fn label_values_cannot_break_out_of_their_quotes() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
