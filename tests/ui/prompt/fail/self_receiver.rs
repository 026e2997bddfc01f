use mcp_runtime::prelude::*;

struct Reviewer {
    style: String,
}

impl Reviewer {
    #[prompt]
    fn code_review(&self, branch: String) -> String {
        format!("Review {branch} in a {} style.", self.style)
    }
}

fn main() {}
