//! Layers around every request and notification: their order, what they may change, list
//! filtering with exact pagination, both eras, and the shipped layers (rate limit, response
//! cache, timing), through the in-process client.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_runtime::ServerBuilder;
use mcp_runtime::middleware::{
    LayerResult, McpRequest, Next, RateLimit, ResponseCache, Timing, from_fn,
};
use mcp_runtime::prelude::*;
use mcp_runtime::protocol::RpcError;
use mcp_tests::memory::{connected, text};
use serde_json::json;

/// Return the text.
#[tool]
fn echo(text: String) -> String {
    text
}

static LOOKUPS: AtomicU64 = AtomicU64::new(0);

/// Look a word up (counts how often it really runs).
#[tool(annotations(read_only))]
fn lookup(word: String) -> String {
    let n = LOOKUPS.fetch_add(1, Ordering::SeqCst) + 1;
    format!("{word} #{n}")
}

static WRITES: AtomicU64 = AtomicU64::new(0);

/// Write (counts how often it runs).
#[tool]
fn write(word: String) -> String {
    let n = WRITES.fetch_add(1, Ordering::SeqCst) + 1;
    format!("{word} #{n}")
}

/// Fails for `bad`.
#[tool(annotations(read_only))]
fn fussy(word: String) -> Result<String, ToolError> {
    if word == "bad" {
        return Err(ToolError::new("bad word"));
    }
    Ok(word)
}

macro_rules! filler_tools {
    ($($name:ident)*) => {$(
        /// A filler tool.
        #[tool]
        fn $name() -> &'static str {
            stringify!($name)
        }
    )*};
}

filler_tools!(t1 t2 t3 t4 t5);

fn builder() -> ServerBuilder {
    mcp_runtime::server!()
        .auto_register(false)
        .tools(mcp_runtime::tools![echo, lookup, write, fussy])
}

type Log = Arc<Mutex<Vec<String>>>;

/// A layer that writes what it sees on the way in and out.
fn recording(name: &'static str, log: &Log) -> impl mcp_runtime::middleware::Layer {
    let log = Arc::clone(log);
    from_fn(move |request: McpRequest, next: Next| {
        let log = Arc::clone(&log);
        async move {
            let method = request.method().to_owned();
            log.lock().unwrap().push(format!("{name} > {method}"));
            let result = next.run(request).await;
            log.lock().unwrap().push(format!("{name} < {method}"));
            result
        }
    })
}

#[mcp_runtime::test]
async fn layers_run_in_the_order_added_around_requests_and_notifications() {
    let log: Log = Arc::default();
    let server = builder()
        .layer(recording("outer", &log))
        .layer(recording("inner", &log))
        .build()
        .unwrap();
    let client = connected(&server).await;
    client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    client
        .notify("notifications/cancelled", json!({"requestId": 99}))
        .await;
    client.request("ping", json!({})).await.unwrap();
    let log = log.lock().unwrap().clone();
    assert_eq!(
        log,
        [
            "outer > initialize",
            "inner > initialize",
            "inner < initialize",
            "outer < initialize",
            "outer > notifications/initialized",
            "inner > notifications/initialized",
            "inner < notifications/initialized",
            "outer < notifications/initialized",
            "outer > tools/call",
            "inner > tools/call",
            "inner < tools/call",
            "outer < tools/call",
            "outer > notifications/cancelled",
            "inner > notifications/cancelled",
            "inner < notifications/cancelled",
            "outer < notifications/cancelled",
            "outer > ping",
            "inner > ping",
            "inner < ping",
            "outer < ping",
        ]
    );
}

#[mcp_runtime::test]
async fn a_layer_may_rewrite_params_replace_results_or_answer_itself() {
    async fn shape(mut request: McpRequest, next: Next) -> LayerResult {
        match (request.method(), request.target()) {
            ("tools/call", Some("echo")) => {
                request.params_mut()["arguments"]["text"] = json!("rewritten");
                let mut result = next.run(request).await?;
                result["content"][0]["text"] = json!(format!(
                    "{}!",
                    result["content"][0]["text"].as_str().unwrap()
                ));
                Ok(result)
            }
            ("logging/setLevel", _) => Err(RpcError::new(-32001, "the level is fixed")),
            _ => next.run(request).await,
        }
    }
    let server = builder().layer(from_fn(shape)).build().unwrap();
    let client = connected(&server).await;
    let result = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(text(&result), "rewritten!");
    let refused = client
        .request("logging/setLevel", json!({"level": "debug"}))
        .await
        .unwrap_err();
    assert_eq!(
        (refused.code, refused.message.as_str()),
        (-32001, "the level is fixed")
    );
    // The others pass untouched.
    let result = client
        .call_tool("lookup", json!({"word": "w"}))
        .await
        .unwrap();
    assert!(text(&result).starts_with("w #"));
}

#[mcp_runtime::test]
async fn hiding_tools_per_caller_keeps_pagination_exact_and_refuses_the_hidden() {
    async fn hide_evens(mut request: McpRequest, next: Next) -> LayerResult {
        for name in ["t2", "t4", "echo"] {
            request.hide_tool(name);
        }
        next.run(request).await
    }
    let server = mcp_runtime::server!()
        .auto_register(false)
        .tools(mcp_runtime::tools![echo, t1, t2, t3, t4, t5])
        .page_size(2)
        .layer(from_fn(hide_evens))
        .build()
        .unwrap();
    let client = connected(&server).await;
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let page = client.request("tools/list", params).await.unwrap();
        let names: Vec<String> = page["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
        pages.push(names);
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(
        pages,
        [vec!["t1", "t3"], vec!["t5"]],
        "full pages of what is visible"
    );
    let refused = client.call_tool("t2", json!({})).await.unwrap_err();
    assert_eq!(refused.code, -32602);
    assert_eq!(refused.message, "unknown tool `t2`");
    assert_eq!(
        text(&client.call_tool("t3", json!({})).await.unwrap()),
        "t3"
    );
}

#[mcp_runtime::test]
async fn layers_serve_the_stateless_era_too() {
    async fn replace(request: McpRequest, next: Next) -> LayerResult {
        if request.method() == "tools/call" && request.target() == Some("write") {
            assert!(request.is_stateless());
            assert_eq!(request.client_info().unwrap().name, "stateless-client");
            return Ok(json!({"content": [{"type": "text", "text": "not written"}]}));
        }
        let mut request = request;
        request.hide_tool("echo");
        next.run(request).await
    }
    let server = builder().layer(from_fn(replace)).build().unwrap();
    let client = server.connect_memory();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "stateless-client", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let result = client
        .request(
            "tools/call",
            json!({"name": "write", "arguments": {"word": "x"}, "_meta": meta}),
        )
        .await
        .unwrap();
    assert_eq!(
        result,
        json!({"resultType": "complete", "content": [{"type": "text", "text": "not written"}]})
    );
    let listed = client
        .request("tools/list", json!({"_meta": meta}))
        .await
        .unwrap();
    assert_eq!(listed["resultType"], "complete");
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["fussy", "lookup", "write"]);
}

#[mcp_runtime::test]
async fn a_layer_that_panics_is_an_internal_error_and_the_server_goes_on() {
    async fn explode(request: McpRequest, next: Next) -> LayerResult {
        if request.target() == Some("echo") {
            panic!("the layer exploded");
        }
        next.run(request).await
    }
    async fn slow(request: McpRequest, next: Next) -> LayerResult {
        // Even `initialize` may wait in a layer.
        mcp_runtime::tokio::time::sleep(Duration::from_millis(5)).await;
        next.run(request).await
    }
    let server = builder()
        .layer(from_fn(slow))
        .layer(from_fn(explode))
        .build()
        .unwrap();
    let client = connected(&server).await;
    let failed = client
        .call_tool("echo", json!({"text": "x"}))
        .await
        .unwrap_err();
    assert_eq!(failed.code, -32603);
    assert_eq!(failed.message, "a layer of the server failed");
    let fine = client
        .call_tool("fussy", json!({"word": "ok"}))
        .await
        .unwrap();
    assert_eq!(text(&fine), "ok");
}

#[mcp_runtime::test]
async fn the_rate_limit_refuses_calls_as_tool_errors_and_other_methods_as_errors() {
    let server = builder()
        .layer(RateLimit::new(2, Duration::from_secs(3600)))
        .build()
        .unwrap();
    // `initialize` took the first token of this connection's bucket.
    let client = connected(&server).await;
    client
        .call_tool("echo", json!({"text": "1"}))
        .await
        .unwrap();
    let refused = client
        .call_tool("echo", json!({"text": "2"}))
        .await
        .unwrap();
    assert!(refused.is_error);
    assert!(
        text(&refused).starts_with("rate limit exceeded: retry in "),
        "{}",
        text(&refused)
    );
    let meta = refused.meta.as_ref().unwrap()["io.mcp-runtime/error"].clone();
    assert_eq!(meta["code"], "rate_limited");
    let retry = meta["retryAfterMs"].as_u64().unwrap();
    assert!(retry > 3_000_000 && retry <= 3_600_000, "{retry}");
    let refused = client.request("tools/list", json!({})).await.unwrap_err();
    assert_eq!(refused.code, -32029);
    assert!(refused.data.unwrap()["retryAfterMs"].as_u64().unwrap() > 3_000_000);
    // Notifications are never refused, and the server goes on answering.
    client
        .notify("notifications/cancelled", json!({"requestId": 1}))
        .await;
}

#[mcp_runtime::test]
async fn the_response_cache_answers_read_only_calls_again_and_nothing_else() {
    let cache = ResponseCache::new(Duration::from_secs(60), 100);
    let server = builder().layer(cache.clone()).build().unwrap();
    let (client, other) = (connected(&server).await, connected(&server).await);
    let first = text(
        &client
            .call_tool("lookup", json!({"word": "a"}))
            .await
            .unwrap(),
    );
    let again = text(
        &client
            .call_tool("lookup", json!({"word": "a"}))
            .await
            .unwrap(),
    );
    assert_eq!(first, again, "answered from the cache");
    let b = text(
        &client
            .call_tool("lookup", json!({"word": "b"}))
            .await
            .unwrap(),
    );
    assert_ne!(b, first, "other arguments run the tool");
    let theirs = text(
        &other
            .call_tool("lookup", json!({"word": "a"}))
            .await
            .unwrap(),
    );
    assert_ne!(
        theirs, first,
        "another caller never gets this caller's result"
    );
    assert_eq!(cache.len(), 3);
    // A tool that may change things runs every time; a tool error is never kept.
    let one = text(
        &client
            .call_tool("write", json!({"word": "w"}))
            .await
            .unwrap(),
    );
    let two = text(
        &client
            .call_tool("write", json!({"word": "w"}))
            .await
            .unwrap(),
    );
    assert_ne!(one, two);
    for _ in 0..2 {
        let failed = client
            .call_tool("fussy", json!({"word": "bad"}))
            .await
            .unwrap();
        assert!(failed.is_error);
    }
    assert_eq!(cache.len(), 3);
    // A result over 256 KiB is answered, not kept.
    let big = "w".repeat(300 * 1024);
    let one = text(
        &client
            .call_tool("lookup", json!({"word": big}))
            .await
            .unwrap(),
    );
    let two = text(
        &client
            .call_tool("lookup", json!({"word": big}))
            .await
            .unwrap(),
    );
    assert_ne!(one, two, "the tool ran again");
    assert_eq!(cache.len(), 3);
    // Kept for its time only.
    let short = ResponseCache::new(Duration::from_millis(1), 100);
    let server = builder().layer(short).build().unwrap();
    let client = connected(&server).await;
    let first = text(
        &client
            .call_tool("lookup", json!({"word": "t"}))
            .await
            .unwrap(),
    );
    mcp_runtime::tokio::time::sleep(Duration::from_millis(5)).await;
    let later = text(
        &client
            .call_tool("lookup", json!({"word": "t"}))
            .await
            .unwrap(),
    );
    assert_ne!(first, later);
}

#[mcp_runtime::test]
async fn timing_counts_each_method_and_its_errors() {
    let timing = Timing::new();
    let server = builder().layer(timing.clone()).build().unwrap();
    let client = connected(&server).await;
    client
        .call_tool("echo", json!({"text": "1"}))
        .await
        .unwrap();
    client
        .call_tool("echo", json!({"text": "2"}))
        .await
        .unwrap();
    client.call_tool("nope", json!({})).await.unwrap_err();
    // A notification of a name the server does not know is counted, not named.
    client.notify(&"x".repeat(10_000), json!({})).await;
    client.request("ping", json!({})).await.unwrap();
    let calls = timing
        .snapshot()
        .into_iter()
        .find(|m| m.method == "tools/call")
        .unwrap();
    assert_eq!((calls.count, calls.errors), (3, 1));
    assert_eq!(calls.buckets.iter().sum::<u64>(), 3);
    assert!(calls.max >= calls.mean());
    let methods: Vec<String> = timing.snapshot().into_iter().map(|m| m.method).collect();
    assert_eq!(
        methods,
        [
            "(unknown notification)",
            "initialize",
            "notifications/initialized",
            "ping",
            "tools/call"
        ]
    );
}

// ---------------------------------------------------------------------------------------
// A policy that waits, and one that hides what it denies

#[derive(Default)]
struct Records(Mutex<Vec<(String, String, Option<String>)>>);

impl mcp_runtime::audit::Audit for Records {
    fn record(&self, record: &mcp_runtime::audit::AuditRecord<'_>) {
        self.0.lock().unwrap().push((
            record.tool.to_owned(),
            record.outcome.as_str().to_owned(),
            record.refused_by.map(str::to_owned),
        ));
    }
}

#[mcp_runtime::test]
async fn an_asynchronous_policy_stage_refuses_before_the_tool_runs_and_is_audited() {
    use mcp_runtime::policy::Policy;
    let before = WRITES.load(Ordering::SeqCst);
    let records = Arc::new(Records::default());
    let policy = Policy::new().check_async("quota", |call| async move {
        // A stage that waits, as one asking a service would.
        mcp_runtime::tokio::task::yield_now().await;
        if call.tool == "write" && call.arguments["word"] == "spam" {
            return Err("the write quota is spent".to_owned());
        }
        Ok(())
    });
    let server = builder()
        .policy(policy)
        .audit(Arc::clone(&records) as Arc<dyn mcp_runtime::audit::Audit>)
        .build()
        .unwrap();
    let client = connected(&server).await;
    let refused = client
        .call_tool("write", json!({"word": "spam"}))
        .await
        .unwrap();
    assert!(refused.is_error);
    assert_eq!(
        text(&refused),
        "permission denied: `write` may not be called (quota: the write quota is spent)"
    );
    assert_eq!(
        refused.meta.unwrap()["mcp-runtime/error"]["code"],
        "permission_denied"
    );
    assert_eq!(WRITES.load(Ordering::SeqCst), before, "the tool never ran");
    let fine = client
        .call_tool("write", json!({"word": "ham"}))
        .await
        .unwrap();
    assert!(text(&fine).starts_with("ham #"));
    let records = records.0.lock().unwrap().clone();
    assert_eq!(
        records,
        [
            ("write".into(), "denied".into(), Some("quota".into())),
            ("write".into(), "ok".into(), None),
        ]
    );
}

#[mcp_runtime::test]
async fn a_policy_that_hides_what_it_denies_keeps_those_tools_out_of_the_list() {
    use mcp_runtime::policy::Policy;
    let server = builder()
        .policy(Policy::new().deny_tools(["write", "fus*"]).hide_denied())
        .build()
        .unwrap();
    let client = connected(&server).await;
    let names: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["echo", "lookup"]);
    // A call is refused as before: with the policy's reason.
    let refused = client
        .call_tool("write", json!({"word": "x"}))
        .await
        .unwrap();
    assert!(text(&refused).starts_with("permission denied: `write` may not be called (deny_list"));
}

#[mcp_runtime::test]
async fn the_policy_and_the_audit_as_layers_do_what_the_built_in_ones_do() {
    use mcp_runtime::middleware::AuditLayer;
    use mcp_runtime::policy::Policy;
    let policy = || {
        Policy::new()
            .deny_tools(["fus*"])
            .check_async("quota", |call| async move {
                if call.arguments["word"] == "spam" {
                    return Err("the write quota is spent".to_owned());
                }
                Ok(())
            })
            .hide_denied()
    };
    let built_in_records = Arc::new(Records::default());
    let built_in = builder()
        .policy(policy())
        .audit(Arc::clone(&built_in_records) as Arc<dyn mcp_runtime::audit::Audit>)
        .build()
        .unwrap();
    let layered_records = Arc::new(Records::default());
    let layered = builder()
        .audit(Arc::new(Records::default()) as Arc<dyn mcp_runtime::audit::Audit>)
        .layer(AuditLayer::new(
            Arc::clone(&layered_records) as Arc<dyn mcp_runtime::audit::Audit>
        ))
        .layer(policy())
        .build()
        .unwrap();
    let mut answers = Vec::new();
    for server in [&built_in, &layered] {
        let client = connected(server).await;
        let names: Vec<String> = client
            .list_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
        let mut seen = vec![names.join(",")];
        for (tool, arguments) in [
            ("write", json!({"word": "spam"})),
            ("fussy", json!({"word": "ok"})),
            ("echo", json!({"text": "hi"})),
            ("lookup", json!({"word": 7})),
        ] {
            let result = client.call_tool(tool, arguments).await.unwrap();
            seen.push(format!("{}: {}", result.is_error, text(&result)));
        }
        answers.push(seen);
    }
    assert_eq!(answers[0], answers[1], "the same answers either way");
    assert_eq!(answers[0][0], "echo,lookup,write");
    let strip = |records: &Records| {
        records
            .0
            .lock()
            .unwrap()
            .iter()
            .map(|(tool, outcome, stage)| format!("{tool} {outcome} {stage:?}"))
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&built_in_records), strip(&layered_records));
    assert_eq!(
        strip(&layered_records),
        [
            "write denied Some(\"quota\")",
            "fussy denied Some(\"deny_list\")",
            "echo ok None",
            "lookup tool_error None",
        ]
    );
}

// ---------------------------------------------------------------------------------------
// The audit record names the trace the call belongs to

#[derive(Default)]
struct Traces(Mutex<Vec<Option<String>>>);

impl mcp_runtime::audit::Audit for Traces {
    fn record(&self, record: &mcp_runtime::audit::AuditRecord<'_>) {
        self.0
            .lock()
            .unwrap()
            .push(record.trace_id.map(str::to_owned));
    }
}

#[mcp_runtime::test]
async fn the_audit_record_names_the_trace_of_the_callers_traceparent() {
    let records = Arc::new(Traces::default());
    let server = builder()
        .audit(Arc::clone(&records) as Arc<dyn mcp_runtime::audit::Audit>)
        .build()
        .unwrap();
    let client = connected(&server).await;
    let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    client
        .request(
            "tools/call",
            json!({"name": "write", "arguments": {"word": "ham"},
                   "_meta": {"traceparent": traceparent}}),
        )
        .await
        .unwrap();
    client
        .call_tool("write", json!({"word": "jam"}))
        .await
        .unwrap();
    client
        .request(
            "tools/call",
            json!({"name": "write", "arguments": {"word": "spam"},
                   "_meta": {"traceparent": "00-not-a-trace-01"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        *records.0.lock().unwrap(),
        [
            Some("4bf92f3577b34da6a3ce929d0e0e4736".to_owned()),
            None,
            None
        ]
    );
}
