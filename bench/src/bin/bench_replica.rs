//! `bench-server`'s tools on one replica of several sharing Redis (`MCP_REDIS_URL`), for
//! `bench/cluster`, which measures 1 and 3 replicas behind nginx; with `MCP_REDIS_URL`
//! empty, the same replica alone, its sessions in its own memory.

use mcp_runtime::prelude::*;

/// Return the text unchanged.
#[tool(annotations(read_only, idempotent))]
fn echo(
    /// The text to return.
    text: String,
) -> String {
    text
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
    let url = std::env::var("MCP_REDIS_URL")
        .map_err(|_| mcp_runtime::Error::Usage("set MCP_REDIS_URL (empty: no Redis)".into()))?;
    let addr = std::env::args()
        .skip_while(|a| a != "--http")
        .nth(1)
        .ok_or_else(|| mcp_runtime::Error::Usage("usage: bench-replica --http ADDR".into()))?;
    let key = std::env::var("MCP_STATE_KEY")
        .unwrap_or_default()
        .into_bytes();
    if url.is_empty() {
        return mcp_runtime::server!()
            .request_state_keys(key, [])
            .build()?
            .serve_http_with(addr, mcp_runtime::http::HttpOptions::default())
            .await;
    }
    let redis = mcp_runtime::redis::RedisCluster::connect(&url).await?;
    let server = redis
        .server(mcp_runtime::server!().request_state_keys(key, []))
        .build()?;
    server
        .serve_http_with(addr, redis.http(mcp_runtime::http::HttpOptions::default()))
        .await
}
