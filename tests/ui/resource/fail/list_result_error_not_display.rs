use mcp_runtime::prelude::*;

#[derive(Debug)]
struct Offline;

fn list_tables() -> Result<Vec<Resource>, Offline> {
    Ok(Vec::new())
}

#[resource("db://tables/{table}/ddl", list = list_tables)]
fn table_ddl(table: String) -> String {
    format!("CREATE TABLE {table} ();")
}

fn main() {}
