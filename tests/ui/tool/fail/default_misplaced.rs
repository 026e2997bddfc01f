use mcp_runtime::prelude::*;

/// Search the notes.
#[tool]
fn search(
    #[default] query: String,
    #[default = 10]
    #[default = 20]
    limit: u32,
    #[default = 1] ctx: Context,
) -> String {
    let _ = ctx;
    format!("{query} {limit}")
}

fn main() {}
