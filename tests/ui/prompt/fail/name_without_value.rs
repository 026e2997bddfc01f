use mcp_runtime::prelude::*;

#[prompt(name)]
fn review(branch: String) -> String {
    format!("Review {branch}.")
}

fn main() {}
