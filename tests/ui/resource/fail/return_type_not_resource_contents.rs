use mcp_runtime::prelude::*;

struct Ddl {
    sql: String,
}

#[resource("db://tables/{table}/ddl")]
fn table_ddl(table: String) -> Ddl {
    Ddl {
        sql: format!("CREATE TABLE {table} ();"),
    }
}

fn main() {}
