use mcp_runtime::prelude::*;

/// Takes an owned `String` instead of `&str`.
fn languages(prefix: String) -> Vec<String> {
    vec![prefix]
}

#[prompt(complete(language = languages))]
fn code_review(language: String) -> String {
    format!("Review the {language} code.")
}

fn main() {}
