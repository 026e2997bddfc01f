use mcp_runtime::prelude::*;

#[tool(args)]
fn ping(ctx: Context) -> &'static str {
    let _ = ctx;
    "pong"
}

fn main() {}
