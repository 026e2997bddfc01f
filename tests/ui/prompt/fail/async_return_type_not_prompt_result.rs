use mcp_runtime::prelude::*;

#[prompt]
async fn count(n: u32) -> u32 {
    n
}

fn main() {}
