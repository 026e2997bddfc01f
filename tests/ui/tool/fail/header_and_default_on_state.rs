use mcp_runtime::prelude::*;

struct Db;

/// Reads the database.
#[tool]
fn read(#[header] db: State<Db>, #[default = 1] other: State<u32>) -> &'static str {
    let _ = (db, other);
    "read"
}

fn main() {}
