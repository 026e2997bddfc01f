use mcp_runtime::prelude::*;

/// A `list` function is called with no arguments.
fn list_tables(schema: &str) -> Vec<Resource> {
    vec![Resource::new(
        format!("db://tables/{schema}.users/ddl"),
        "users",
    )]
}

#[resource("db://tables/{table}/ddl", list = list_tables)]
fn table_ddl(table: String) -> String {
    format!("CREATE TABLE {table} ();")
}

fn main() {}
