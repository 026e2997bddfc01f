//! `serve_http` in a crate that depends on mcp-runtime without its `http` feature.

use mcp_runtime::prelude::*;

/// Say hello.
#[tool]
fn hello() -> &'static str {
    "hello"
}

#[mcp_runtime::main]
async fn main() -> mcp_runtime::Result<()> {
    mcp_runtime::server!().serve_http("127.0.0.1:8080").await
}
