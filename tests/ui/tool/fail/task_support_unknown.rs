use mcp_runtime::prelude::*;

#[tool(task = "sometimes")]
async fn build() -> &'static str {
    "built"
}

fn main() {}
