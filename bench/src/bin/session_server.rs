//! `bench-server`'s `echo` over Streamable HTTP with room for many sessions and connections
//! from one client (`max_sessions_per_client`, 1,000 by default, counts every session from
//! loopback as one client's), for `mcp-load sessions`, which measures what an idle session
//! costs, and for `mcp-load growth`'s fan-out row, whose sessions subscribe to
//! `bench://watched` and hold a GET stream each while `touch` changes it.
//!
//! `session-server --http ADDR`; built only with this crate's `http` feature.

use std::sync::atomic::{AtomicU64, Ordering};

use mcp_runtime::http::HttpOptions;
use mcp_runtime::prelude::*;

static REVISION: AtomicU64 = AtomicU64::new(0);

/// Return the text unchanged.
#[tool(annotations(read_only, idempotent))]
fn echo(
    /// The text to return.
    text: String,
) -> String {
    text
}

/// The resource the fan-out's subscribers watch.
#[resource("bench://watched", name = "watched", mime = "text/plain")]
fn watched() -> String {
    format!("revision {}", REVISION.load(Ordering::Relaxed))
}

/// Changes the watched resource, telling every subscriber.
#[tool]
fn touch(ctx: Context) -> String {
    let revision = REVISION.fetch_add(1, Ordering::Relaxed) + 1;
    if let Some(server) = ctx.server() {
        server.notify_resource_updated("bench://watched");
    }
    format!("revision {revision}")
}

#[mcp_runtime::main]
async fn main() -> mcp_runtime::Result<()> {
    let mut args = std::env::args().skip(1);
    let addr = match (args.next().as_deref(), args.next()) {
        (Some("--http"), Some(addr)) => addr,
        _ => {
            eprintln!("usage: session-server --http ADDR");
            std::process::exit(2);
        }
    };
    let options = HttpOptions::default()
        .max_sessions(1_000_000)
        .max_sessions_per_client(1_000_000)
        .max_connections(100_000)
        .max_connections_per_peer(100_000);
    mcp_runtime::server!()
        .build()?
        .serve_http_with(addr, options)
        .await
}
