//! The catalogue server: every kind of tool, prompt and resource, over stdio.
//! `PAGE_SIZE` and `MAX_MESSAGE_BYTES` in the environment set those limits.

#[path = "catalogue_items.rs"]
mod items;

#[mcp_runtime::main]
async fn main() -> mcp_runtime::Result<()> {
    let page_size = std::env::var("PAGE_SIZE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(mcp_runtime::DEFAULT_PAGE_SIZE);
    let max_message_bytes = std::env::var("MAX_MESSAGE_BYTES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(mcp_runtime::DEFAULT_MAX_MESSAGE_BYTES);
    let client_timeout = std::env::var("CLIENT_TIMEOUT_MS")
        .ok()
        .and_then(|s| s.parse().ok())
        .map_or(
            mcp_runtime::DEFAULT_CLIENT_REQUEST_TIMEOUT,
            std::time::Duration::from_millis,
        );
    mcp_runtime::server!()
        .instructions("A catalogue of every kind of tool.")
        .client_request_timeout(client_timeout)
        .page_size(page_size)
        .max_message_bytes(max_message_bytes)
        .serve()
        .await
}
