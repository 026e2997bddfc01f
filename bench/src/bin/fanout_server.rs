//! A resource many clients subscribe to, and a tool that changes it, over Streamable HTTP
//! with room for many sessions and connections, for `mcp-load growth`'s fan-out row: the
//! time from `touch` (which calls `notify_resource_updated`) to the last subscriber's
//! `notifications/resources/updated`.

use std::sync::atomic::{AtomicU64, Ordering};

use mcp_runtime::http::HttpOptions;
use mcp_runtime::prelude::*;

static REVISION: AtomicU64 = AtomicU64::new(0);

/// The resource the subscribers watch.
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
            eprintln!("usage: fanout-server --http ADDR");
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
