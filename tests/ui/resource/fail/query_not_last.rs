use mcp_runtime::prelude::*;

#[resource("search://{?q}/results")]
fn search(q: Option<String>) -> String {
    format!("{q:?}")
}

fn main() {}
