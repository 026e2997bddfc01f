use mcp_runtime::prelude::*;

#[resource("config://app", cache(public))]
fn config() -> String {
    "{}".into()
}

fn main() {}
