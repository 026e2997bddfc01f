//! Our server for the benchmarks: `echo` and `add` on mcp-runtime, over stdio by default and
//! over Streamable HTTP with `--http ADDR` (when mcp-runtime's `http` feature is on), plus
//! `echo_progress`, which reports progress once before it answers, so that the HTTP load
//! exercises SSE responses too.
//!
//! Written the way the quickstart is, with nothing tuned: the load driver and the build-cost
//! measurement both use this file, so it depends on `mcp-runtime` alone.

use mcp_runtime::prelude::*;

/// Return the text unchanged.
#[tool(annotations(read_only, idempotent))]
fn echo(
    /// The text to return.
    text: String,
) -> String {
    text
}

/// Add two integers (wrapping on overflow).
#[tool(annotations(read_only, idempotent))]
fn add(
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
) -> i64 {
    a.wrapping_add(b)
}

/// Return the text unchanged, after one progress notification (when the call asked for
/// progress).
#[tool(annotations(read_only, idempotent))]
async fn echo_progress(
    ctx: Context,
    /// The text to return.
    text: String,
) -> String {
    ctx.progress(1.0, Some(1.0), None).await;
    text
}

#[mcp_runtime::main]
async fn main() -> mcp_runtime::Result<()> {
    mcp_runtime::server!().serve().await
}
