use mcp_runtime::prelude::*;

fn tables(prefix: &str) -> Vec<String> {
    vec![prefix.to_owned()]
}

#[resource("db://tables", complete(table = tables))]
fn all_tables() -> String {
    "users, orders".to_owned()
}

fn main() {}
