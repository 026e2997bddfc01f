use mcp_runtime::prelude::*;

#[derive(Debug)]
struct StoreOffline;

#[prompt]
fn code_review(branch: String) -> Result<String, StoreOffline> {
    Ok(format!("Review {branch}."))
}

fn main() {}
