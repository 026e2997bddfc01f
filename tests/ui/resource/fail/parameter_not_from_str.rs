use mcp_runtime::prelude::*;

/// Does not implement `FromStr`.
struct TableName(String);

#[resource("db://tables/{table}/ddl")]
fn table_ddl(table: TableName) -> String {
    format!("CREATE TABLE {} ();", table.0)
}

fn main() {}
