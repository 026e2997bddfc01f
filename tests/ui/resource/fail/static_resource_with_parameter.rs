use mcp_runtime::prelude::*;

#[resource("db://tables")]
fn tables(schema: String) -> String {
    format!("tables of {schema}")
}

fn main() {}
