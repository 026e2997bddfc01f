use mcp_runtime::prelude::*;

#[resource("db://tables/{table-name}/ddl")]
fn table_ddl(table_name: String) -> String {
    format!("CREATE TABLE {table_name} ();")
}

fn main() {}
