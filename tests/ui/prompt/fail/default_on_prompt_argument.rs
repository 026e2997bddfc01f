use mcp_runtime::prelude::*;

/// Review a branch.
#[prompt]
fn review(#[default = "main"] branch: String, #[serde(default)] depth: u32) -> String {
    format!("Review {branch} to depth {depth}")
}

fn main() {}
