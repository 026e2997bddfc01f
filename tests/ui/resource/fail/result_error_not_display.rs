use mcp_runtime::prelude::*;

#[derive(Debug)]
struct Offline;

#[resource("db://tables/{table}/ddl")]
fn table_ddl(table: String) -> Result<String, Offline> {
    Ok(format!("CREATE TABLE {table} ();"))
}

fn main() {}
