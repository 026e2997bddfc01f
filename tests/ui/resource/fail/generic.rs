use mcp_runtime::prelude::*;

#[resource("db://tables/{table}/ddl")]
fn table_ddl<T: std::fmt::Display>(table: T) -> String {
    format!("CREATE TABLE {table} ();")
}

fn main() {}
