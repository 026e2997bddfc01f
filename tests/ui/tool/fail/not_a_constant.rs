use mcp_runtime::prelude::*;

/// The greeting.
#[tool]
const GREETING: &str = "hello";

fn main() {}
