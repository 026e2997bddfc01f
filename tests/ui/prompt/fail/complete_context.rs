use mcp_runtime::prelude::*;

fn languages(prefix: &str) -> Vec<String> {
    vec![prefix.to_owned()]
}

/// A `Context` is supplied by the runtime: it is no argument to complete.
#[prompt(complete(ctx = languages))]
fn code_review(ctx: Context, language: String) -> String {
    let _ = ctx;
    format!("Review the {language} code.")
}

fn main() {}
