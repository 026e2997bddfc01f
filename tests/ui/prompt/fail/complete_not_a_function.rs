use mcp_runtime::prelude::*;

#[prompt(complete(language = "rust"))]
fn code_review(language: String) -> String {
    format!("Review the {language} code.")
}

fn main() {}
