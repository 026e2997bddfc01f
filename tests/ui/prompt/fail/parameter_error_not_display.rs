use mcp_runtime::prelude::*;

/// Implements `FromStr`, but its error cannot be shown to the client.
struct Branch(String);

struct NoDisplay;

impl std::str::FromStr for Branch {
    type Err = NoDisplay;

    fn from_str(s: &str) -> Result<Self, NoDisplay> {
        Ok(Branch(s.to_owned()))
    }
}

#[prompt]
fn code_review(base: Branch) -> String {
    format!("Review against {}.", base.0)
}

fn main() {}
