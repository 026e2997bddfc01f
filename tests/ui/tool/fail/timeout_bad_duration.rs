use mcp_runtime::prelude::*;

#[tool(timeout = "soon")]
async fn deploy() -> &'static str {
    "deployed"
}

#[tool(timeout = 30)]
async fn rollback() -> &'static str {
    "rolled back"
}

#[tool(timeout = "0s")]
async fn instant() -> &'static str {
    "never"
}

fn main() {}
