use mcp_runtime::prelude::*;

#[prompt("code_review")]
fn review(branch: String) -> String {
    format!("Review {branch}.")
}

fn main() {}
