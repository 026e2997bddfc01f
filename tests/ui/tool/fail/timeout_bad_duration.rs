use mcp_runtime::prelude::*;

#[tool(timeout = "soon")]
async fn deploy() -> &'static str {
    "deployed"
}

#[tool(timeout = 30)]
async fn rollback() -> &'static str {
    "rolled back"
}

fn main() {}
