//! The caller server: tools that show a handler what it can learn of its caller, its request
//! and its session, and that keep state in the session, and items that need OAuth scopes.
//! Over stdio, or over Streamable HTTP with `--http ADDR`; with `HTTP_AUTH_TOKENS`
//! (`token:subject[:scope scope…],…`; the scopes default to `mcp`) every HTTP request needs
//! one of those bearer tokens, and with `HTTP_STATELESS=1` the endpoint keeps no sessions.
//! `RATE_LIMIT=N` puts a rate limit of N requests an hour per caller in front of everything;
//! `RESPONSE_CACHE=1` a response cache (an hour, 100 results) inside it.
//!
//! With `OAUTH_ISSUER` (an authorization server's URL) and `OAUTH_AUDIENCE` (this server's
//! canonical URI) instead, tokens are JWTs of that issuer (`JwtVerifier`; its keys fetched
//! again for an unknown key at most every `OAUTH_MIN_REFRESH_MS`; with `OAUTH_AT_JWT=1` only
//! tokens typed `at+jwt`), or with
//! `OAUTH_INTROSPECTION=1` opaque tokens asked about at its introspection endpoint as the
//! client `mcp-server` (`Introspection`, answers kept `OAUTH_CACHE_MS`).
//!
//! `METRICS=1` serves the metrics at `/metrics`, for tokens with the scope `metrics:read`; `OTEL_EXPORTER_OTLP_ENDPOINT` exports spans
//! and metrics over OTLP (`otel::Otlp::from_env`).

use mcp_runtime::AuthInfo;
use mcp_runtime::http::{BearerTokens, HttpOptions};
use mcp_runtime::prelude::*;
use mcp_runtime::serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Everything a handler knows of who calls it and how.
#[tool]
fn whoami(ctx: Context) -> Json<Value> {
    let http = ctx.http_request();
    Json(json!({
        "session": ctx.session_id(),
        "has_session": ctx.session().is_ok(),
        "subject": ctx.auth().map(|a| a.subject.clone()),
        "scopes": ctx.auth().map(|a| a.scopes.clone()),
        "client_id": ctx.auth().and_then(|a| a.client_id.clone()),
        "client": ctx.client_info().map(|c| c.name.clone()),
        "sampling": ctx.client_capabilities().is_some_and(|c| c.contains_key("sampling")),
        "method": http.map(|r| r.method().as_str().to_owned()),
        "path": http.map(|r| r.path().to_owned()),
        "probe": http.and_then(|r| r.headers().get("x-probe")).and_then(|v| v.to_str().ok()),
        "authorization_seen": http.is_some_and(|r| r.headers().contains_key("authorization")),
        "peer_is_loopback": http.and_then(|r| r.peer_addr()).map(|a| a.ip().is_loopback()),
    }))
}

/// Words kept in the session.
#[derive(Default, Serialize, Deserialize)]
#[serde(crate = "mcp_runtime::serde")]
struct Words(Vec<String>);

/// Keep a word in this session.
#[tool]
fn remember(ctx: Context, word: String) -> Result<usize, ToolError> {
    Ok(ctx.session()?.update(|words: &mut Words| {
        words.0.push(word);
        words.0.len()
    })?)
}

/// The words kept in this session.
#[tool]
fn recall(ctx: Context) -> Result<Json<Vec<String>>, ToolError> {
    let words: Option<Words> = ctx.session()?.get()?;
    Ok(Json(words.unwrap_or_default().0))
}

/// Hide a tool from this session.
#[tool]
fn hide(ctx: Context, name: String) -> Result<bool, ToolError> {
    Ok(ctx.session()?.disable_tool(&name))
}

/// Show the secret tool to this session.
#[tool]
fn unlock(ctx: Context) -> Result<bool, ToolError> {
    Ok(ctx.session()?.enable_tool("secret"))
}

/// Write a note (needs the scope `notes:write`).
#[tool(scopes("notes:write"))]
fn write_note(text: String) -> String {
    format!("wrote {text}")
}

/// Read the ledger (needs `ledger:read`; read-only, so a response cache may keep it).
#[tool(scopes("ledger:read"), annotations(read_only))]
fn read_ledger() -> String {
    static READS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = READS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
    format!("ledger read {n} times")
}

/// A prompt for readers (needs `notes:read`).
#[prompt(scopes("notes:read"))]
fn read_notes() -> String {
    "read the notes".into()
}

/// The admin's page (needs `admin`).
#[resource("caller://admin", scopes("admin"))]
fn admin_page() -> String {
    "for admins".into()
}

/// Work in a span of its own, a child of the request's; answers the trace id.
#[tool]
async fn traced(text: String) -> String {
    use opentelemetry::trace::{TraceContextExt, Tracer};
    let tracer = opentelemetry::global::tracer("caller");
    tracer.in_span(format!("shout {text}"), |cx| {
        cx.span().span_context().trace_id().to_string()
    })
}

/// Always fails, as a tool error.
#[tool]
fn fail() -> Result<String, ToolError> {
    Err(ToolError::new("this tool always fails"))
}

/// A tool the server offers to no one until a session unlocks it.
#[tool]
fn secret() -> &'static str {
    "the cake is in the cupboard"
}

/// The options of a server whose tokens the authorization server at `issuer` vouches for.
fn oauth(options: HttpOptions, issuer: &str, audience: &str) -> HttpOptions {
    use mcp_runtime::oauth::{Introspection, JwtVerifier};
    use std::time::Duration;
    let millis = |name: &str, default: u64| {
        Duration::from_millis(
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(default),
        )
    };
    let base = audience.trim_end_matches("/mcp");
    let options = options
        .authorization_servers([issuer])
        .resource_base_url(base);
    if std::env::var("OAUTH_INTROSPECTION").is_ok_and(|v| v == "1") {
        options.auth(
            Introspection::new(issuer, audience)
                .client("mcp-server", "introspection-secret")
                .cache_for(millis("OAUTH_CACHE_MS", 60_000)),
        )
    } else {
        let mut verifier =
            JwtVerifier::new(issuer, audience).min_refresh(millis("OAUTH_MIN_REFRESH_MS", 30_000));
        if std::env::var("OAUTH_AT_JWT").is_ok_and(|v| v == "1") {
            verifier = verifier.access_token_type_only();
        }
        options.auth(verifier)
    }
}

#[mcp_runtime::main]
async fn main() -> mcp_runtime::Result<()> {
    let mut builder = mcp_runtime::server!();
    if let Some(burst) = std::env::var("RATE_LIMIT")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        builder = builder.layer(mcp_runtime::middleware::RateLimit::new(
            burst,
            std::time::Duration::from_secs(3600),
        ));
    }
    if std::env::var("RESPONSE_CACHE").is_ok_and(|v| v == "1") {
        builder = builder.layer(mcp_runtime::middleware::ResponseCache::new(
            std::time::Duration::from_secs(3600),
            100,
        ));
    }
    let server = builder.build()?;
    server.disable_tool("secret");
    let telemetry = match mcp_runtime::otel::Otlp::from_env() {
        Some(otlp) => Some(otlp.install(&server).map_err(std::io::Error::other)?),
        None => None,
    };
    let mut args = std::env::args().skip(1);
    match (args.next().as_deref(), args.next()) {
        (Some("--http"), Some(addr)) => {
            let mut options = HttpOptions::default();
            if let Ok(tokens) = std::env::var("HTTP_AUTH_TOKENS") {
                let mut verifier = BearerTokens::new();
                // `token:subject`, or `token:subject:scope scope…` (scopes may hold `:`).
                for entry in tokens.split(',') {
                    let mut parts = entry.splitn(3, ':');
                    if let (Some(token), Some(subject)) = (parts.next(), parts.next()) {
                        let scopes = parts.next().unwrap_or("mcp").split(' ');
                        verifier = verifier.token(token, AuthInfo::new(subject).scopes(scopes));
                    }
                }
                options = options.auth(verifier);
            }
            if let (Ok(issuer), Ok(audience)) = (
                std::env::var("OAUTH_ISSUER"),
                std::env::var("OAUTH_AUDIENCE"),
            ) {
                options = oauth(options, &issuer, &audience);
            }
            if std::env::var("HTTP_STATELESS").is_ok_and(|v| v == "1") {
                options = options.stateless(true);
            }
            if std::env::var("METRICS").is_ok_and(|v| v == "1") {
                options = options
                    .metrics_route("/metrics")
                    .metrics_scope("metrics:read");
            }
            server.serve_http_with(addr, options).await?;
        }
        _ => server.serve_stdio().await?,
    }
    if let Some(telemetry) = telemetry {
        telemetry.shutdown().await;
    }
    Ok(())
}
