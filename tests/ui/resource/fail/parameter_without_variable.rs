use mcp_runtime::prelude::*;

#[resource("db://tables/{table}/ddl")]
fn table_ddl(table: String, schema: String) -> String {
    format!("CREATE TABLE {schema}.{table} ();")
}

fn main() {}
