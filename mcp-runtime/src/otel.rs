//! OpenTelemetry (feature `otel`): a span per request and the server's metrics, exported
//! over OTLP/HTTP (protobuf) to a collector or any backend that takes OTLP.
//!
//! - **Spans** follow the semantic conventions for MCP servers: kind `SERVER`, named
//!   `{mcp.method.name} {target}` (`tools/call add`), with `mcp.method.name`,
//!   `jsonrpc.request.id`, `gen_ai.tool.name` / `gen_ai.prompt.name`,
//!   `gen_ai.operation.name`, `mcp.resource.uri`, `mcp.protocol.version`,
//!   `network.transport`, `mcp.session.id` (a digest of it: the id itself is a credential),
//!   and `error.type` with an error status when the request fails. A span's parent is the
//!   caller's W3C trace context from the request's `params._meta` (`traceparent`,
//!   `tracestate`), else from the HTTP request's headers. The handler runs inside the span:
//!   spans it starts (through `opentelemetry::global::tracer`) are its children.
//! - **Metrics** are those of [`crate::metrics`]: `mcp.server.operation.duration`
//!   (histogram, seconds), `mcp.server.requests.in_flight`, `mcp.server.sessions`,
//!   `mcp.server.notifications.dropped`.
//!
//! ```no_run
//! use mcp_runtime::otel::Otlp;
//!
//! #[mcp_runtime::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let server = mcp_runtime::server!().build()?;
//!     // OTEL_EXPORTER_OTLP_ENDPOINT (e.g. http://collector:4318) and OTEL_SERVICE_NAME.
//!     let telemetry = match Otlp::from_env() {
//!         Some(otlp) => Some(otlp.install(&server)?),
//!         None => None,
//!     };
//!     server.serve_stdio().await?;
//!     if let Some(telemetry) = telemetry {
//!         telemetry.shutdown().await; // sends what is still buffered
//!     }
//!     Ok(())
//! }
//! ```

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use opentelemetry::KeyValue;
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_http::{HttpClient, HttpError};
use opentelemetry_otlp::{Protocol, WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::SdkTracerProvider;

use crate::Server;

/// Where and how to export: an OTLP/HTTP endpoint (a collector's `http://host:4318`),
/// the service's name, headers (an API key), and how often metrics are sent.
#[derive(Clone)]
pub struct Otlp {
    endpoint: String,
    service_name: Option<String>,
    headers: HashMap<String, String>,
    metrics_every: Duration,
}

impl fmt::Debug for Otlp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Header values are often API keys: only their names are shown.
        f.debug_struct("Otlp")
            .field("endpoint", &self.endpoint)
            .field("service_name", &self.service_name)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("metrics_every", &self.metrics_every)
            .finish()
    }
}

/// Why the exporters could not be set up.
#[derive(Debug)]
pub struct OtelError(String);

impl fmt::Display for OtelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OpenTelemetry: {}", self.0)
    }
}

impl std::error::Error for OtelError {}

impl Otlp {
    /// Exports to the OTLP/HTTP endpoint at `endpoint` (spans to `{endpoint}/v1/traces`,
    /// metrics to `{endpoint}/v1/metrics`).
    pub fn new(endpoint: impl Into<String>) -> Self {
        Otlp {
            endpoint: endpoint.into().trim_end_matches('/').to_owned(),
            service_name: None,
            headers: HashMap::new(),
            metrics_every: Duration::from_secs(60),
        }
    }

    /// From the standard variables: `OTEL_EXPORTER_OTLP_ENDPOINT` (none: `None`),
    /// `OTEL_SERVICE_NAME`, `OTEL_EXPORTER_OTLP_HEADERS` (`key=value,…`) and
    /// `OTEL_METRIC_EXPORT_INTERVAL` (milliseconds).
    pub fn from_env() -> Option<Self> {
        let endpoint = std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT")
            .ok()
            .filter(|e| !e.is_empty())?;
        let mut otlp = Otlp::new(endpoint);
        if let Ok(name) = std::env::var("OTEL_SERVICE_NAME") {
            otlp = otlp.service_name(name);
        }
        if let Ok(headers) = std::env::var("OTEL_EXPORTER_OTLP_HEADERS") {
            for (key, value) in header_list(&headers) {
                otlp = otlp.header(key, value);
            }
        }
        if let Some(millis) = std::env::var("OTEL_METRIC_EXPORT_INTERVAL")
            .ok()
            .and_then(|m| m.parse().ok())
        {
            otlp = otlp.metrics_every(Duration::from_millis(millis));
        }
        Some(otlp)
    }

    /// The `service.name` of the exported resource (by default the server's name).
    pub fn service_name(mut self, name: impl Into<String>) -> Self {
        self.service_name = Some(name.into());
        self
    }

    /// A header sent with every export (e.g. a backend's API key).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.insert(name.into(), value.into());
        self
    }

    /// How often metrics are exported (every minute by default).
    pub fn metrics_every(mut self, every: Duration) -> Self {
        self.metrics_every = every;
        self
    }

    /// Starts exporting `server`'s spans and metrics; also makes the exporting tracer
    /// provider the global one, so handlers' own spans go the same way, as children of
    /// their request's. Call it inside the Tokio runtime (`#[mcp_runtime::main]`); one
    /// installation per process.
    pub fn install(self, server: &Server) -> Result<Telemetry, OtelError> {
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|_| OtelError("install it inside the Tokio runtime".into()))?;
        static INSTALLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if INSTALLED.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return Err(OtelError(
                "already installed in this process: install once, for one server".into(),
            ));
        }
        if !self.headers.is_empty() && plain_http_elsewhere(&self.endpoint) {
            tracing::warn!(
                endpoint = %self.endpoint,
                "OTLP headers (often an API key) go in the clear to a host that is not this one: use https"
            );
        }
        let client = Exporting {
            client: crate::outbound::client().map_err(OtelError)?,
            runtime,
        };
        let service = self
            .service_name
            .clone()
            .unwrap_or_else(|| server.info().name.clone());
        let resource = Resource::builder()
            .with_service_name(service)
            .with_attribute(KeyValue::new(
                "service.version",
                server.info().version.clone(),
            ))
            .build();

        let spans = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(client.clone())
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(format!("{}/v1/traces", self.endpoint))
            .with_headers(self.headers.clone())
            .build()
            .map_err(|e| OtelError(e.to_string()))?;
        let tracer_provider = SdkTracerProvider::builder()
            .with_batch_exporter(spans)
            .with_resource(resource.clone())
            .build();
        crate::telemetry::install(tracer_provider.tracer("mcp-runtime"));
        opentelemetry::global::set_tracer_provider(tracer_provider.clone());
        opentelemetry::global::set_text_map_propagator(
            opentelemetry_sdk::propagation::TraceContextPropagator::new(),
        );

        let metrics = opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .with_http_client(client)
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(format!("{}/v1/metrics", self.endpoint))
            .with_headers(self.headers)
            .build()
            .map_err(|e| OtelError(e.to_string()))?;
        let reader = PeriodicReader::builder(metrics)
            .with_interval(self.metrics_every)
            .build();
        let meter_provider = SdkMeterProvider::builder()
            .with_reader(reader)
            .with_resource(resource)
            .build();
        instruments(&meter_provider, server);
        server.metrics().enable();
        Ok(Telemetry {
            providers: Some((tracer_provider, meter_provider)),
        })
    }
}

/// The headers of `OTEL_EXPORTER_OTLP_HEADERS`: `key=value` pairs separated by commas, the
/// values percent-encoded (W3C Baggage syntax, as the OpenTelemetry specification says).
fn header_list(text: &str) -> Vec<(String, String)> {
    text.split(',')
        .filter_map(|pair| pair.split_once('='))
        .map(|(key, value)| {
            let value = percent_encoding::percent_decode_str(value.trim()).decode_utf8_lossy();
            (key.trim().to_owned(), value.into_owned())
        })
        .filter(|(key, _)| !key.is_empty())
        .collect()
}

/// Whether `endpoint` is plain HTTP to another machine.
fn plain_http_elsewhere(endpoint: &str) -> bool {
    endpoint
        .parse::<hyper::Uri>()
        .is_ok_and(|uri| crate::outbound::in_the_clear(&uri))
}

/// The server's metrics as OpenTelemetry instruments, read at each export.
fn instruments(provider: &SdkMeterProvider, server: &Server) {
    let meter = provider.meter("mcp-runtime");
    let weak = || server.downgrade();
    let read = weak();
    let _ = meter
        .i64_observable_gauge("mcp.server.requests.in_flight")
        .with_description("MCP requests being served now")
        .with_callback(move |gauge| {
            if let Some(server) = read.upgrade() {
                gauge.observe(server.metrics().in_flight().max(0), &[]);
            }
        })
        .build();
    let read = weak();
    let _ = meter
        .i64_observable_gauge("mcp.server.sessions")
        .with_description("Live MCP sessions")
        .with_callback(move |gauge| {
            if let Some(server) = read.upgrade() {
                let live = i64::try_from(server.session_count()).unwrap_or(i64::MAX);
                gauge.observe(live, &[]);
            }
        })
        .build();
    let read = weak();
    let _ = meter
        .u64_observable_counter("mcp.server.notifications.dropped")
        .with_description("Notifications dropped because the peer was not reading")
        .with_callback(move |counter| {
            if let Some(server) = read.upgrade() {
                counter.observe(server.metrics().notifications_dropped(), &[]);
            }
        })
        .build();
    let histogram = meter
        .f64_histogram("mcp.server.operation.duration")
        .with_unit("s")
        .with_description("MCP requests, from arrival to response")
        .with_boundaries(crate::metrics::DURATION_BUCKETS.to_vec())
        .build();
    server.metrics().set_histogram(histogram);
}

/// The installed exporters. [`shutdown`](Self::shutdown) sends what is buffered before the
/// process ends (spans are sent in batches, metrics periodically); dropped without it, they
/// are shut down on a thread of their own, without waiting.
pub struct Telemetry {
    providers: Option<(SdkTracerProvider, SdkMeterProvider)>,
}

impl fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Telemetry").finish_non_exhaustive()
    }
}

impl Telemetry {
    /// Sends every buffered span and the metrics now, without stopping.
    pub async fn flush(&self) {
        let Some((tracer, meter)) = self.providers.clone() else {
            return;
        };
        // The exporters block their caller while the runtime sends: off the runtime's
        // threads, so a one-thread runtime can send meanwhile.
        let _ = tokio::task::spawn_blocking(move || {
            let _ = tracer.force_flush();
            let _ = meter.force_flush();
        })
        .await;
    }

    /// Sends what is buffered and stops exporting.
    pub async fn shutdown(mut self) {
        if let Some(providers) = self.providers.take() {
            let _ = tokio::task::spawn_blocking(move || stop(providers)).await;
        }
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        let Some(providers) = self.providers.take() else {
            return;
        };
        // Stopping blocks until the last export is sent, which needs the runtime: never on
        // one of its threads.
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(move || stop(providers))),
            Err(_) => stop(providers),
        }
    }
}

fn stop((tracer, meter): (SdkTracerProvider, SdkMeterProvider)) {
    let _ = tracer.shutdown();
    let _ = meter.shutdown();
}

/// The exporters' HTTP client: the runtime's, its requests run on the Tokio runtime the
/// exporters were installed from (they call from threads of their own).
#[derive(Clone)]
struct Exporting {
    client: crate::outbound::Client,
    runtime: tokio::runtime::Handle,
}

impl fmt::Debug for Exporting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Exporting").finish_non_exhaustive()
    }
}

/// How long one export may take, and the most of an answer read.
const EXPORT_DEADLINE: Duration = Duration::from_secs(10);
const MAX_ANSWER_BYTES: usize = 1 << 20;

impl HttpClient for Exporting {
    fn send_bytes<'a, 'b>(
        &'a self,
        request: axum::http::Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<axum::http::Response<Bytes>, HttpError>> + Send + 'b>>
    where
        'a: 'b,
        Self: 'b,
    {
        let client = self.client.clone();
        let (parts, body) = request.into_parts();
        let request = hyper::Request::from_parts(parts, Full::new(body));
        let sent = self.runtime.spawn(async move {
            let exchange = async {
                let response = client.request(request).await?;
                let (parts, body) = response.into_parts();
                let body = Limited::new(body, MAX_ANSWER_BYTES)
                    .collect()
                    .await?
                    .to_bytes();
                Ok::<_, HttpError>(axum::http::Response::from_parts(parts, body))
            };
            tokio::time::timeout(EXPORT_DEADLINE, exchange)
                .await
                .map_err(|_| HttpError::from("the OTLP endpoint did not answer in time"))?
        });
        Box::pin(async move { sent.await.map_err(|e| HttpError::from(e.to_string()))? })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_headers_variable_is_read_as_its_specification_says() {
        assert_eq!(
            super::header_list("api-key=s%3Dcr%2Cet, x-team = core ,broken,=nokey"),
            [
                ("api-key".to_owned(), "s=cr,et".to_owned()),
                ("x-team".to_owned(), "core".to_owned()),
            ]
        );
    }

    #[test]
    fn headers_in_the_clear_are_noticed() {
        assert!(super::plain_http_elsewhere("http://collector:4318"));
        assert!(!super::plain_http_elsewhere("https://collector:4318"));
        assert!(!super::plain_http_elsewhere("http://127.0.0.1:4318"));
        assert!(!super::plain_http_elsewhere("http://[::1]:4318"));
        assert!(!super::plain_http_elsewhere("http://localhost:4318"));
    }
}
