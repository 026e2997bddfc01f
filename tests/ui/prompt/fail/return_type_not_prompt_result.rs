use mcp_runtime::prelude::*;

struct Review {
    text: String,
}

#[prompt]
fn code_review(branch: String) -> Review {
    Review {
        text: format!("Review {branch}."),
    }
}

fn main() {}
