use mcp_runtime::prelude::*;

#[resource("file:///notes.txt")]
fn notes() -> String
where
    String: Clone,
{
    "remember the milk".to_owned()
}

fn main() {}
