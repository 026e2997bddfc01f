//! A server whose `main` calls `serve_http` itself, at the address in `MCP_TEST_ADDR`, with
//! no `--http` on its command line: `#[mcp_runtime::main]` starts on one thread, and the HTTP
//! serving moves to a multi-threaded scheduler of its own (tests/scheduler.rs).

use mcp_runtime::prelude::*;

/// Add two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[mcp_runtime::main]
async fn main() -> mcp_runtime::Result<()> {
    let addr = std::env::var("MCP_TEST_ADDR").unwrap_or_else(|_| "127.0.0.1:0".into());
    mcp_runtime::server!().serve_http(addr).await
}
