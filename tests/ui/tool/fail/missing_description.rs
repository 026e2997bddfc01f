//! A tool without a doc comment is a warning at its name (denied here, to show it).
#![deny(deprecated)]

use mcp_runtime::prelude::*;

#[tool]
fn word_count(text: String) -> usize {
    text.split_whitespace().count()
}

/// Has a description: no warning.
#[tool]
fn char_count(text: String) -> usize {
    text.chars().count()
}

#[tool(description = "Count the lines.")]
fn line_count(text: String) -> usize {
    text.lines().count()
}

fn main() {}
