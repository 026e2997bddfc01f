//! `bench-server`'s `echo` over Streamable HTTP with room for many sessions from one client
//! (`max_sessions_per_client`, 1,000 by default, counts every session from loopback as one
//! client's), for `mcp-load sessions`, which measures what an idle session costs.
//!
//! `session-server --http ADDR`; built only with this crate's `http` feature.

use mcp_runtime::http::HttpOptions;
use mcp_runtime::prelude::*;

/// Return the text unchanged.
#[tool(annotations(read_only, idempotent))]
fn echo(
    /// The text to return.
    text: String,
) -> String {
    text
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
        .max_sessions_per_client(1_000_000);
    mcp_runtime::server!()
        .build()?
        .serve_http_with(addr, options)
        .await
}
