use mcp_runtime::prelude::*;

#[resource("db://tables/{table}/ddl")]
fn table_ddl((table, _): (String, u32)) -> String {
    format!("CREATE TABLE {table} ();")
}

fn main() {}
