//! The in-process client as the tests use it: connected and initialised, and a call's one
//! text content.

use mcp_runtime::{CallToolResult, Content, MemoryClient, Server};

/// A client of `server`, past `initialize`.
pub async fn connected(server: &Server) -> MemoryClient {
    let client = server.connect_memory();
    client.initialize().await.expect("initialize");
    client
}

/// The text of a result with exactly one text content (the test fails otherwise).
pub fn text(result: &CallToolResult) -> String {
    match &result.content[..] {
        [Content::Text(t)] => t.text.clone(),
        other => panic!("one text content expected, got {other:?}"),
    }
}
