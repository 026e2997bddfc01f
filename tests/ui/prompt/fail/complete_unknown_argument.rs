use mcp_runtime::prelude::*;

fn languages(prefix: &str) -> Vec<String> {
    vec![prefix.to_owned()]
}

#[prompt(complete(langauge = languages))]
fn code_review(branch: String, language: Option<String>) -> String {
    format!("Review {branch} in {language:?}.")
}

fn main() {}
