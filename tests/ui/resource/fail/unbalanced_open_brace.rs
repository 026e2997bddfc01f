use mcp_runtime::prelude::*;

#[resource("db://tables/{table/ddl")]
fn table_ddl(table: String) -> String {
    format!("CREATE TABLE {table} ();")
}

fn main() {}
