use mcp_runtime::prelude::*;

#[resource("db://tables/{table}/ddl", list = "list_tables")]
fn table_ddl(table: String) -> String {
    format!("CREATE TABLE {table} ();")
}

fn main() {}
