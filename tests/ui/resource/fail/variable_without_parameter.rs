use mcp_runtime::prelude::*;

#[resource("db://tables/{table}/columns/{column}")]
fn column(table: String) -> String {
    format!("columns of {table}")
}

fn main() {}
