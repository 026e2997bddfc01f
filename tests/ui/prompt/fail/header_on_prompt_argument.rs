use mcp_runtime::prelude::*;

#[prompt]
fn review(#[header] branch: String) -> String {
    format!("Review {branch}")
}

fn main() {}
