//! A tool without a doc comment: a warning at its name, and no other.

use mcp_runtime::prelude::*;

#[tool]
fn word_count(text: String) -> usize {
    text.split_whitespace().count()
}

/// Count the characters.
#[tool]
fn char_count(text: String) -> usize {
    text.chars().count()
}

#[mcp_runtime::main]
async fn main() -> mcp_runtime::Result<()> {
    mcp_runtime::server!().serve_stdio().await
}
