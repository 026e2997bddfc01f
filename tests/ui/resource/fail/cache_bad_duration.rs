use mcp_runtime::prelude::*;

#[resource("config://app", cache(ttl = "5 minutes", shared))]
fn config() -> String {
    "{}".into()
}

#[resource("config://other", cache(ttl = "300"))]
fn other() -> String {
    "{}".into()
}

fn main() {}
