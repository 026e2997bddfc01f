use mcp_runtime::prelude::*;

#[resource("search://items{?q,limit}")]
fn search(q: Option<String>, limit: u32) -> String {
    format!("{q:?} {limit}")
}

fn main() {}
