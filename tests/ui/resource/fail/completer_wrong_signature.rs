use mcp_runtime::prelude::*;

/// Takes the whole context first.
fn tables(context: &mcp_runtime::CompletionContext, prefix: &str) -> Vec<String> {
    let _ = context;
    vec![prefix.to_owned()]
}

#[resource("db://tables/{table}/ddl", complete(table = tables))]
fn table_ddl(table: String) -> String {
    format!("CREATE TABLE {table} ();")
}

fn main() {}
