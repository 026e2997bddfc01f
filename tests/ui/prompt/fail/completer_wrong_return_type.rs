use mcp_runtime::prelude::*;

/// Returns one `String` instead of a list.
fn languages(prefix: &str) -> String {
    prefix.to_owned()
}

#[prompt(complete(language = languages))]
fn code_review(language: String) -> String {
    format!("Review the {language} code.")
}

fn main() {}
