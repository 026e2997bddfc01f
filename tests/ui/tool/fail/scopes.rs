use mcp_runtime::prelude::*;

/// Scopes written every wrong way.
#[tool(scopes = "notes:write")]
fn not_a_list() {}

/// A scope that is no literal, one with a space, an empty one, one given twice.
#[tool(scopes(NOTES, "notes write", "", "a:b", "a:b"))]
fn wrong_scopes() {}

fn main() {}
