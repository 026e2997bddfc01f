use mcp_runtime::prelude::*;

fn tables(prefix: &str) -> Vec<String> {
    vec![prefix.to_owned()]
}

#[resource("db://tables/{table}/ddl", complete(tabel = tables))]
fn table_ddl(table: String) -> String {
    format!("CREATE TABLE {table} ();")
}

fn main() {}
