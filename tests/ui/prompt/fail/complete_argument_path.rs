use mcp_runtime::prelude::*;

fn languages(prefix: &str) -> Vec<String> {
    vec![prefix.to_owned()]
}

#[prompt(complete(args::language = languages))]
fn code_review(language: String) -> String {
    format!("Review the {language} code.")
}

fn main() {}
