use mcp_runtime::prelude::*;

#[prompt]
struct CodeReview {
    branch: String,
}

fn main() {}
