use mcp_runtime::prelude::*;

#[resource("db://tables/{}/ddl")]
fn table_ddl() -> String {
    "CREATE TABLE t ();".to_owned()
}

fn main() {}
