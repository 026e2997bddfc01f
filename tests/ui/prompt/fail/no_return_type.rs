use mcp_runtime::prelude::*;

#[prompt]
fn code_review(branch: String) {
    let _ = branch;
}

fn main() {}
