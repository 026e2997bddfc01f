use mcp_runtime::prelude::*;

#[tool]
fn route(#[header] ctx: Context, region: String) -> String {
    let _ = ctx;
    region
}

fn main() {}
