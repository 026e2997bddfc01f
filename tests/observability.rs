//! What an operator sees of a running server: the metrics route scraped by a real
//! Prometheus, and spans and metrics exported over OTLP to a receiver that decodes the real
//! protobuf (opentelemetry-proto). Both through the caller server over HTTP.

use std::io::Read;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mcp_tests::http::{HttpServer, Request, Session};
use mcp_tests::prometheus::Prometheus;
use serde_json::{Value, json};

const TOKENS: &str = "token-a:alice,scraper-token:prometheus:metrics:read";

fn caller(env: &[(&str, &str)]) -> HttpServer {
    HttpServer::spawn(env!("CARGO_BIN_EXE_caller").as_ref(), env)
}

/// Polls `check` until it gives a value, failing the test after `within`.
fn eventually<T>(within: Duration, what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + within;
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(Instant::now() < deadline, "not within {within:?}: {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A child process ended with the test.
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn metrics_text(server: &HttpServer, token: Option<&str>) -> (u16, String) {
    let mut request = server.request("GET", "/metrics");
    if let Some(token) = token {
        request = request.header("Authorization", &format!("Bearer {token}"));
    }
    let response = request.send();
    (response.status, response.text())
}

#[test]
fn the_metrics_route_counts_requests_and_a_real_prometheus_scrapes_it() {
    let server = caller(&[("HTTP_AUTH_TOKENS", TOKENS), ("METRICS", "1")]);
    let session = Session::open_with(&server, "2025-11-25", json!({}), Some("token-a"));
    for id in 1..=3 {
        session.call(id, "whoami", json!({}));
    }
    let failed = session.call(4, "fail", json!({}));
    assert_eq!(failed["result"]["isError"], true, "{failed}");
    let unknown = session.call(5, "no_such_tool", json!({}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let made_up = session.request(6, "made/up", json!({}));
    assert_eq!(made_up["error"]["code"], -32601, "{made_up}");

    // The route is behind the same gate as the endpoint, and for the operator only.
    assert_eq!(metrics_text(&server, None).0, 401);
    assert_eq!(metrics_text(&server, Some("token-a")).0, 403);
    let (status, text) = metrics_text(&server, Some("scraper-token"));
    assert_eq!(status, 200, "{text}");
    assert!(
        !text.contains("no_such_tool"),
        "made-up names are not kept: {text}"
    );
    for line in [
        "mcp_server_operation_duration_seconds_count{mcp_method_name=\"tools/call\",gen_ai_tool_name=\"whoami\"} 3",
        "mcp_server_operation_duration_seconds_count{mcp_method_name=\"tools/call\",gen_ai_tool_name=\"fail\",error_type=\"tool_error\"} 1",
        "mcp_server_operation_duration_seconds_count{mcp_method_name=\"tools/call\",gen_ai_tool_name=\"_OTHER\",error_type=\"-32602\"} 1",
        "mcp_server_operation_duration_seconds_count{mcp_method_name=\"_OTHER\",error_type=\"-32601\"} 1",
        "mcp_server_operation_duration_seconds_count{mcp_method_name=\"initialize\"} 1",
        "mcp_server_requests_in_flight 0",
        "mcp_server_sessions 1",
        "# TYPE mcp_server_operation_duration_seconds histogram",
    ] {
        assert!(text.contains(line), "`{line}` in:\n{text}");
    }

    // A real Prometheus scrapes it, with a token of its own.
    let prometheus = Prometheus::scraping(server.addr(), "scraper-token");
    // Prometheus applies new targets every 5 s, then scrapes each second.
    let value = eventually(
        Duration::from_secs(60),
        "Prometheus scraped the server",
        || {
            let answer = prometheus.query(
                "mcp_server_operation_duration_seconds_count{job=\"mcp\",gen_ai_tool_name=\"whoami\"}",
            );
            answer["data"]["result"][0]["value"][1]
                .as_str()
                .map(str::to_owned)
        },
    );
    assert_eq!(value, "3");
    let up = prometheus.query("up{job=\"mcp\"}");
    assert_eq!(up["data"]["result"][0]["value"][1], "1", "{up}");
    let errors = prometheus
        .query("sum(mcp_server_operation_duration_seconds_count{error_type=\"tool_error\"})");
    assert_eq!(errors["data"]["result"][0]["value"][1], "1", "{errors}");
}

/// The OTLP receiver (tests/support/otlp_receiver.py) and its URL.
fn receiver() -> (Process, String) {
    let python = std::env::var("MCP_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/support/otlp_receiver.py");
    let mut child = Command::new(python)
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the test Python (./run-tests prepares it, with opentelemetry-proto)");
    let mut line = String::new();
    let mut stdout = child.stdout.take().expect("piped");
    let mut byte = [0u8; 1];
    while stdout.read(&mut byte).unwrap_or(0) == 1 && byte[0] != b'\n' {
        line.push(byte[0] as char);
    }
    let url = serde_json::from_str::<Value>(&line)
        .ok()
        .and_then(|v| v["url"].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("the receiver did not start: {line:?}"));
    (Process(child), url)
}

fn received(url: &str) -> Value {
    let addr: SocketAddr = url.trim_start_matches("http://").parse().unwrap();
    Request::new(addr, "GET", "/received").send().json()
}

fn span<'a>(received: &'a Value, name: &str) -> Option<&'a Value> {
    received["spans"]
        .as_array()?
        .iter()
        .find(|s| s["name"] == name)
}

#[test]
fn spans_parented_on_the_callers_trace_and_metrics_reach_an_otlp_receiver() {
    let (_receiver, url) = receiver();
    let server = caller(&[
        ("HTTP_AUTH_TOKENS", TOKENS),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &url),
        ("OTEL_SERVICE_NAME", "caller-e2e"),
        ("OTEL_BSP_SCHEDULE_DELAY", "100"),
        ("OTEL_METRIC_EXPORT_INTERVAL", "300"),
    ]);
    let session = Session::open_with(&server, "2025-11-25", json!({}), Some("token-a"));
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let parent = "00f067aa0ba902b7";
    let traced = session.request(
        1,
        "tools/call",
        json!({"name": "traced", "arguments": {"text": "hi"},
               "_meta": {"traceparent": format!("00-{trace}-{parent}-01")}}),
    );
    assert_eq!(
        traced["result"]["content"][0]["text"], trace,
        "the handler runs in the caller's trace: {traced}"
    );
    let failed = session.call(2, "fail", json!({}));
    assert_eq!(failed["result"]["isError"], true);
    // No `_meta`: the HTTP request's own traceparent header is the parent.
    let header_trace = "0af7651916cd43dd8448eb211c80319c";
    let listed = session
        .post(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}))
        .header(
            "traceparent",
            &format!("00-{header_trace}-b7ad6b7169203331-01"),
        )
        .send();
    assert_eq!(listed.status, 200);

    let all = eventually(Duration::from_secs(30), "the spans were exported", || {
        let all = received(&url);
        (span(&all, "tools/call traced").is_some()
            && span(&all, "shout hi").is_some()
            && span(&all, "tools/call fail").is_some()
            && span(&all, "tools/list").is_some())
        .then_some(all)
    });
    assert_eq!(all["errors"], json!([]), "every export decoded");
    let call = span(&all, "tools/call traced").unwrap();
    assert_eq!(call["kind"], "SPAN_KIND_SERVER");
    assert_eq!(call["traceId"], trace);
    assert_eq!(
        call["parentSpanId"], parent,
        "parented on the caller's span"
    );
    let attributes = &call["attributes"];
    assert_eq!(attributes["mcp.method.name"], "tools/call", "{call}");
    assert_eq!(attributes["gen_ai.tool.name"], "traced");
    assert_eq!(attributes["gen_ai.operation.name"], "execute_tool");
    assert_eq!(attributes["jsonrpc.request.id"], "1");
    assert_eq!(attributes["network.transport"], "tcp");
    assert_eq!(attributes["mcp.protocol.version"], "2025-11-25");
    let digest = attributes["mcp.session.id"].as_str().unwrap();
    assert_eq!(digest.len(), 16, "{digest}");
    assert_ne!(digest, session.id, "the session id itself is not exported");
    assert!(attributes.get("error.type").is_none(), "{call}");
    assert_eq!(call["resource"]["service.name"], "caller-e2e");

    let child = span(&all, "shout hi").unwrap();
    assert_eq!(child["traceId"], trace);
    assert_eq!(
        child["parentSpanId"], call["spanId"],
        "the handler's span is the request span's child"
    );

    let fail = span(&all, "tools/call fail").unwrap();
    assert_eq!(fail["attributes"]["error.type"], "tool_error", "{fail}");
    assert_eq!(fail["status"]["code"], "STATUS_CODE_ERROR");

    let list = span(&all, "tools/list").unwrap();
    assert_eq!(list["traceId"], header_trace, "{list}");

    let point = eventually(Duration::from_secs(30), "the metrics were exported", || {
        let all = received(&url);
        all["metric_points"]
            .as_array()?
            .iter()
            .find(|p| {
                p["name"] == "mcp.server.operation.duration"
                    && p["attributes"]["gen_ai.tool.name"] == "traced"
            })
            .cloned()
    });
    assert_eq!(point["kind"], "histogram", "{point}");
    assert_eq!(point["count"], 1);
    assert_eq!(point["attributes"]["mcp.method.name"], "tools/call");
    let all = received(&url);
    let sessions = all["metric_points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "mcp.server.sessions")
        .cloned()
        .unwrap_or_default();
    assert_eq!(sessions["value"], 1, "{sessions}");
}
