use mcp_runtime::prelude::*;

#[resource("file:///notes.txt")]
const NOTES: &str = "remember the milk";

fn main() {}
