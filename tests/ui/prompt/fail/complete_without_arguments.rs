use mcp_runtime::prelude::*;

fn languages(prefix: &str) -> Vec<String> {
    vec![prefix.to_owned()]
}

#[prompt(complete(language = languages))]
fn code_review() -> &'static str {
    "Review the code."
}

fn main() {}
