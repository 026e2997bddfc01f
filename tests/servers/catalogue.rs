//! The catalogue server: every kind of tool, prompt and resource, over stdio, or over
//! Streamable HTTP with `--http ADDR`.
//!
//! `PAGE_SIZE`, `MAX_MESSAGE_BYTES`, `MAX_NESTING_DEPTH`, `MAX_IN_FLIGHT`,
//! `CLIENT_TIMEOUT_MS`, `TOOL_TIMEOUT_MS` and `SHUTDOWN_GRACE_MS` in the environment set those
//! limits; `LIST_CACHE_MS` (with `LIST_CACHE_PRIVATE=1`) and `READ_CACHE_MS` (with
//! `READ_CACHE_PUBLIC=1`) the stateless era's cache hints. `POLICY_ALLOW` and `POLICY_DENY`
//! (comma-separated patterns) and `POLICY_SCOPES` (`pattern=scope,scope`) make a policy;
//! `AUDIT_FILE` writes one JSON line per audited call to that file. With `MCP_REDIS_URL`
//! (and `--http`) the server is one replica of several sharing that Redis; `MCP_STATE_KEY`
//! is the `requestState` key replicas share. Over HTTP these set the endpoint's options:
//!
//! | Variable | Option |
//! |---|---|
//! | `SESSION_IDLE_MS` | `session_idle_timeout` |
//! | `SESSION_RECHECK_MS` | `shared_session_recheck` |
//! | `BUS_APPLIED_WAIT_MS` (with `MCP_REDIS_URL`) | `RedisBus::set_applied_wait` |
//! | `HTTP_STATELESS=1` | `stateless(true)` |
//! | `HTTP_MAX_BODY_BYTES` | `max_body_bytes` |
//! | `HTTP_MAX_IN_FLIGHT` | `max_in_flight_per_session` |
//! | `HTTP_MAX_IN_FLIGHT_SESSIONLESS` | `max_in_flight_sessionless` |
//! | `HTTP_MAX_SESSIONS` | `max_sessions` |
//! | `HTTP_MAX_SESSIONS_PER_CLIENT` | `max_sessions_per_client` |
//! | `HTTP_MAX_IN_FLIGHT_PER_CLIENT` | `max_in_flight_per_client` |
//! | `HTTP_SSE_RETRY_MS` | `sse_retry` |
//! | `HTTP_SSE_KEEP_ALIVE_MS` | `sse_keep_alive` |
//! | `HTTP_HEADER_TIMEOUT_MS`, `HTTP_BODY_TIMEOUT_MS`, `HTTP_IDLE_TIMEOUT_MS` | `header_read_timeout`, `body_read_timeout`, `idle_timeout` |
//! | `HTTP_MAX_CONNECTIONS`, `HTTP_MAX_CONNECTIONS_PER_PEER` | `max_connections`, `max_connections_per_peer` |
//! | `HTTP_ALLOWED_HOSTS`, `HTTP_ALLOWED_ORIGINS` (comma-separated) | `allowed_hosts`, `allowed_origins` |
//! | `HTTP_AUTH_TOKEN` | `auth`: this bearer token is valid, for the caller `tester` |
//! | `HTTP_AUTH_TOKENS` (`token:subject,…`) | `auth`: more tokens, each for its subject |
//! | `HTTP_AUTH_SCOPES` (space-separated, default `mcp`) | the scopes that token grants |
//! | `HTTP_REQUIRED_SCOPES` (space-separated) | `required_scopes` |
//! | `HTTP_AUTHORIZATION_SERVERS` (space-separated) | `authorization_servers` |

#[path = "catalogue_items.rs"]
mod items;

use std::time::Duration;

use mcp_runtime::AuthInfo;
use mcp_runtime::http::{BearerTokens, HttpOptions};

#[mcp_runtime::main]
async fn main() -> mcp_runtime::Result<()> {
    let page_size = number("PAGE_SIZE").unwrap_or(mcp_runtime::DEFAULT_PAGE_SIZE);
    let max_message_bytes =
        number("MAX_MESSAGE_BYTES").unwrap_or(mcp_runtime::DEFAULT_MAX_MESSAGE_BYTES);
    let client_timeout = number("CLIENT_TIMEOUT_MS").map_or(
        mcp_runtime::DEFAULT_CLIENT_REQUEST_TIMEOUT,
        Duration::from_millis,
    );
    let mut builder = mcp_runtime::server!()
        .instructions("A catalogue of every kind of tool.")
        .client_request_timeout(client_timeout)
        .page_size(page_size)
        .max_message_bytes(max_message_bytes);
    if let Some(ms) = number("LIST_CACHE_MS") {
        builder = builder.list_cache_hint(Duration::from_millis(ms), !flag("LIST_CACHE_PRIVATE"));
    }
    if let Some(ms) = number("READ_CACHE_MS") {
        builder = builder.read_cache_hint(Duration::from_millis(ms), flag("READ_CACHE_PUBLIC"));
    }
    if let Some(depth) = number("MAX_NESTING_DEPTH") {
        builder = builder.max_nesting_depth(depth);
    }
    if let Some(requests) = number("MAX_IN_FLIGHT") {
        builder = builder.max_in_flight(requests);
    }
    if let Some(ms) = number("TOOL_TIMEOUT_MS") {
        builder = builder.tool_timeout(Duration::from_millis(ms));
    }
    if let Some(ms) = number("SHUTDOWN_GRACE_MS") {
        builder = builder.shutdown_grace(Duration::from_millis(ms));
    }
    if let Some(policy) = policy() {
        builder = builder.policy(policy);
    }
    if let Ok(path) = std::env::var("AUDIT_FILE") {
        builder = builder.audit(std::sync::Arc::new(FileAudit(std::sync::Mutex::new(
            std::fs::File::create(path)?,
        ))));
    }
    if let Ok(key) = std::env::var("MCP_STATE_KEY") {
        builder = builder.request_state_keys(key.into_bytes(), []);
    }
    if let Some(secs) = number("REQUEST_STATE_LIFETIME_SECS") {
        builder = builder.request_state_lifetime(std::time::Duration::from_secs(secs));
    }
    match http_address() {
        // One replica of several, sharing Redis.
        Some(addr) if std::env::var("MCP_REDIS_URL").is_ok() => {
            let url = std::env::var("MCP_REDIS_URL").unwrap_or_default();
            let redis = mcp_runtime::redis::RedisCluster::connect(&url).await?;
            if let Some(ms) = number("BUS_APPLIED_WAIT_MS") {
                redis
                    .bus()
                    .set_applied_wait(std::time::Duration::from_millis(ms));
            }
            let server = redis.server(builder).build()?;
            server
                .serve_http_with(addr, redis.http(http_options()))
                .await
        }
        Some(addr) => builder.build()?.serve_http_with(addr, http_options()).await,
        None => builder.serve().await,
    }
}

/// The address after `--http` (or in `--http=ADDR`), when given.
fn http_address() -> Option<String> {
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if let Some(addr) = arg.strip_prefix("--http=") {
            return Some(addr.to_owned());
        }
        if arg == "--http" {
            return args.next();
        }
    }
    None
}

/// The policy the environment describes, if any.
fn policy() -> Option<mcp_runtime::policy::Policy> {
    let mut policy = mcp_runtime::policy::Policy::new();
    let mut any = false;
    if let Some(allowed) = list("POLICY_ALLOW", ',') {
        policy = policy.allow_tools(allowed);
        any = true;
    }
    if let Some(denied) = list("POLICY_DENY", ',') {
        policy = policy.deny_tools(denied);
        any = true;
    }
    if let Ok(spec) = std::env::var("POLICY_SCOPES")
        && let Some((pattern, scopes)) = spec.split_once('=')
    {
        policy = policy.require_scopes(pattern, scopes.split(','));
        any = true;
    }
    any.then_some(policy)
}

/// Audit records as JSON lines in a file.
struct FileAudit(std::sync::Mutex<std::fs::File>);

impl mcp_runtime::audit::Audit for FileAudit {
    fn record(&self, r: &mcp_runtime::audit::AuditRecord<'_>) {
        use std::io::Write as _;
        let line = mcp_runtime::serde_json::json!({
            "time": r.time, "caller": r.caller, "tool": r.tool,
            "arguments": r.arguments_digest, "outcome": r.outcome.as_str(),
            "refusedBy": r.refused_by, "durationMs": r.duration.as_secs_f64() * 1e3,
        });
        let mut file = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let _ = writeln!(file, "{line}");
    }
}

fn flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v == "1")
}

fn number<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|s| s.parse().ok())
}

fn list(name: &str, separator: char) -> Option<Vec<String>> {
    std::env::var(name).ok().map(|s| {
        s.split(separator)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    })
}

fn http_options() -> HttpOptions {
    let mut options = HttpOptions::default();
    if let Ok(path) = std::env::var("HTTP_PATH") {
        options = options.path(path);
    }
    if let Some(ms) = number("SESSION_IDLE_MS") {
        options = options.session_idle_timeout(Duration::from_millis(ms));
    }
    if let Some(ms) = number("SESSION_RECHECK_MS") {
        options = options.shared_session_recheck(Duration::from_millis(ms));
    }
    if std::env::var("HTTP_STATELESS").is_ok_and(|v| v == "1") {
        options = options.stateless(true);
    }
    if let Some(bytes) = number("HTTP_MAX_BODY_BYTES") {
        options = options.max_body_bytes(bytes);
    }
    if let Some(requests) = number("HTTP_MAX_IN_FLIGHT") {
        options = options.max_in_flight_per_session(requests);
    }
    if let Some(requests) = number("HTTP_MAX_IN_FLIGHT_SESSIONLESS") {
        options = options.max_in_flight_sessionless(requests);
    }
    if let Some(sessions) = number("HTTP_MAX_SESSIONS") {
        options = options.max_sessions(sessions);
    }
    if let Some(sessions) = number("HTTP_MAX_SESSIONS_PER_CLIENT") {
        options = options.max_sessions_per_client(sessions);
    }
    if let Some(requests) = number("HTTP_MAX_IN_FLIGHT_PER_CLIENT") {
        options = options.max_in_flight_per_client(requests);
    }
    if let Some(ms) = number("HTTP_SSE_RETRY_MS") {
        options = options.sse_retry(Duration::from_millis(ms));
    }
    if let Some(ms) = number("HTTP_SSE_KEEP_ALIVE_MS") {
        options = options.sse_keep_alive(Duration::from_millis(ms));
    }
    if let Some(ms) = number("HTTP_HEADER_TIMEOUT_MS") {
        options = options.header_read_timeout(Duration::from_millis(ms));
    }
    if let Some(ms) = number("HTTP_BODY_TIMEOUT_MS") {
        options = options.body_read_timeout(Duration::from_millis(ms));
    }
    if let Some(ms) = number("HTTP_IDLE_TIMEOUT_MS") {
        options = options.idle_timeout(Duration::from_millis(ms));
    }
    if let Some(connections) = number("HTTP_MAX_CONNECTIONS") {
        options = options.max_connections(connections);
    }
    if let Some(connections) = number("HTTP_MAX_CONNECTIONS_PER_PEER") {
        options = options.max_connections_per_peer(connections);
    }
    if let Some(hosts) = list("HTTP_ALLOWED_HOSTS", ',') {
        options = options.allowed_hosts(hosts);
    }
    if let Some(origins) = list("HTTP_ALLOWED_ORIGINS", ',') {
        options = options.allowed_origins(origins);
    }
    let scopes = list("HTTP_AUTH_SCOPES", ' ').unwrap_or_else(|| vec!["mcp".into()]);
    let mut tokens = BearerTokens::new();
    let mut any_token = false;
    if let Ok(token) = std::env::var("HTTP_AUTH_TOKEN") {
        tokens = tokens.token(token, AuthInfo::new("tester").scopes(scopes.clone()));
        any_token = true;
    }
    for entry in list("HTTP_AUTH_TOKENS", ',').unwrap_or_default() {
        if let Some((token, subject)) = entry.split_once(':') {
            tokens = tokens.token(token, AuthInfo::new(subject).scopes(scopes.clone()));
            any_token = true;
        }
    }
    if any_token {
        options = options.auth(tokens);
    }
    if let Some(scopes) = list("HTTP_REQUIRED_SCOPES", ' ') {
        options = options.required_scopes(scopes);
    }
    if let Some(servers) = list("HTTP_AUTHORIZATION_SERVERS", ' ') {
        options = options.authorization_servers(servers);
    }
    options
}
