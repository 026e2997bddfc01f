//! The peer built on rmcp, the official Rust SDK, serving the same `echo` and `add` tools (and
//! `echo_progress`, which reports progress once before it answers, for the SSE responses of
//! the HTTP load).
//!
//! Two configurations, chosen by `--fast`, on stdio by default or on Streamable HTTP with
//! `--http ADDR` (with this crate's `http` feature):
//!
//! - default: rmcp as its documentation shows it. `#[tool_handler]` reaches the tools through
//!   `Self::tool_router()`, which builds the router anew for every `tools/call` and
//!   `tools/list`. On stdio the transport is `transport::stdio()`, whose reads and writes
//!   each hop to Tokio's blocking thread pool; on HTTP it is rmcp's `counter_streamhttp`
//!   example: `StreamableHttpService` with `LocalSessionManager` and the default
//!   `StreamableHttpServerConfig` (sessions, every response an SSE stream) nested in an axum
//!   `Router` served by `axum::serve`, except that TCP_NODELAY is on, as mcp-runtime sets it.
//!   `axum::serve` leaves Nagle's algorithm on, and then every SSE response after its first
//!   write waits for the client's delayed ACK (about 40 ms a call on Linux): `--nagle` serves
//!   exactly as the example does, to see that.
//! - `--fast`: the fastest configuration rmcp offers. The router is built once and kept in a
//!   field (`#[tool_handler(router = self.tool_router)]`; shared, because over HTTP rmcp
//!   makes a server value per session or request). On stdio the transport is
//!   `transport::stdio_pipes()`, which drives the pipes from Tokio's reactor; on HTTP the
//!   config is stateless (`legacy_session_mode: false`, `NeverSessionManager`, no session
//!   worker task in between) with `json_response: true` (plain JSON unless the handler sends
//!   something first), no SSE keep-alive or priming event, and TCP_NODELAY on every
//!   connection. (In the 2026-07-28 era rmcp serves every request statelessly whatever the
//!   config says; there the configurations differ in `json_response` and the router.)
//!
//! Depends on rmcp and Tokio only (serde and schemars through rmcp's re-exports), plus axum
//! for HTTP, so the build-cost measurement can compile this file alone.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::ProgressNotificationParam;
use rmcp::schemars::JsonSchema;
use rmcp::serde::Deserialize;
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router, transport};

#[derive(Deserialize, JsonSchema)]
#[serde(crate = "rmcp::serde")]
#[schemars(crate = "rmcp::schemars")]
struct EchoArgs {
    /// The text to return.
    text: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(crate = "rmcp::serde")]
#[schemars(crate = "rmcp::schemars")]
struct AddArgs {
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
}

/// The same tools on each server type: `#[tool_router]` must see the `#[tool]`s in the impl
/// block it is written on.
macro_rules! echo_and_add {
    ($server:ty) => {
        #[tool_router]
        impl $server {
            /// Return the text unchanged.
            #[tool(annotations(read_only_hint = true, idempotent_hint = true))]
            fn echo(&self, Parameters(args): Parameters<EchoArgs>) -> String {
                args.text
            }

            /// Add two integers (wrapping on overflow).
            #[tool(annotations(read_only_hint = true, idempotent_hint = true))]
            fn add(&self, Parameters(args): Parameters<AddArgs>) -> String {
                args.a.wrapping_add(args.b).to_string()
            }

            /// Return the text unchanged, after one progress notification (when the call
            /// asked for progress).
            #[tool(annotations(read_only_hint = true, idempotent_hint = true))]
            async fn echo_progress(
                &self,
                Parameters(args): Parameters<EchoArgs>,
                context: RequestContext<RoleServer>,
            ) -> String {
                if let Some(token) = context.meta.get_progress_token() {
                    let progress = ProgressNotificationParam::new(token, 1.0).with_total(1.0);
                    // A client that left needs no progress; its call ends anyway.
                    let _ = context.peer.notify_progress(progress).await;
                }
                args.text
            }
        }
    };
}

/// rmcp's default configuration.
#[derive(Clone)]
struct DefaultServer;

echo_and_add!(DefaultServer);

#[tool_handler]
impl ServerHandler for DefaultServer {}

/// rmcp's fastest configuration.
#[derive(Clone)]
struct FastServer {
    tool_router: Arc<ToolRouter<FastServer>>,
}

impl FastServer {
    fn new() -> FastServer {
        FastServer {
            tool_router: Arc::new(FastServer::tool_router()),
        }
    }
}

echo_and_add!(FastServer);

#[tool_handler(router = self.tool_router)]
impl ServerHandler for FastServer {}

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let mut fast = false;
    let mut nagle = false;
    let mut http: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--fast" => fast = true,
            "--nagle" => nagle = true,
            "--http" => http = Some(args.next().ok_or("--http needs an address")?),
            other => {
                return Err(format!(
                    "unknown argument `{other}`; expected `--fast`, `--http ADDR`, `--nagle`"
                )
                .into());
            }
        }
    }
    if let Some(addr) = http {
        return serve_http(&addr, fast, !nagle).await;
    }
    if fast {
        FastServer::new()
            .serve(transport::stdio_pipes())
            .await?
            .waiting()
            .await?;
    } else {
        DefaultServer
            .serve(transport::stdio())
            .await?
            .waiting()
            .await?;
    }
    Ok(())
}

/// Serves Streamable HTTP at `/mcp` until SIGTERM or Ctrl-C, saying where on standard error
/// in the words mcp-runtime uses, which the load driver waits for.
#[cfg(feature = "http")]
async fn serve_http(addr: &str, fast: bool, nodelay: bool) -> Result<(), Error> {
    use axum::serve::ListenerExt;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let listener = listener.tap_io(move |tcp| {
        if nodelay {
            let _ = tcp.set_nodelay(true);
        }
    });
    if fast {
        let server = FastServer::new();
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None)
            .with_sse_retry(None);
        let service = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(NeverSessionManager::default()),
            config,
        );
        let router = axum::Router::new().nest_service("/mcp", service);
        eprintln!("mcp: serving Streamable HTTP on http://{local}/mcp");
        axum::serve(listener, router)
            .with_graceful_shutdown(shutdown_signal())
            .await?;
    } else {
        let service = StreamableHttpService::new(
            || Ok(DefaultServer),
            LocalSessionManager::default().into(),
            Default::default(),
        );
        let router = axum::Router::new().nest_service("/mcp", service);
        eprintln!("mcp: serving Streamable HTTP on http://{local}/mcp");
        axum::serve(listener, router)
            .with_graceful_shutdown(shutdown_signal())
            .await?;
    }
    Ok(())
}

#[cfg(not(feature = "http"))]
async fn serve_http(_addr: &str, _fast: bool, _nodelay: bool) -> Result<(), Error> {
    Err("this rmcp-server was built without HTTP (the `http` feature of mcp-bench)".into())
}

#[cfg(all(feature = "http", unix))]
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut term) = signal(SignalKind::terminate()) else {
        let _ = tokio::signal::ctrl_c().await;
        return;
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

#[cfg(all(feature = "http", not(unix)))]
async fn shutdown_signal() {
    let _ = tokio::signal::ctrl_c().await;
}
