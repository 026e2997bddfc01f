use mcp_runtime::prelude::*;

/// Returns the names, not `Resource` entries.
fn list_tables() -> Vec<String> {
    vec!["users".to_owned()]
}

#[resource("db://tables/{table}/ddl", list = list_tables)]
fn table_ddl(table: String) -> String {
    format!("CREATE TABLE {table} ();")
}

fn main() {}
