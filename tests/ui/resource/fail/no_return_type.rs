use mcp_runtime::prelude::*;

#[resource("db://tables/{table}/ddl")]
fn table_ddl(table: String) {
    let _ = table;
}

fn main() {}
