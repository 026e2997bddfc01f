use mcp_runtime::prelude::*;

struct Db;

/// Reads the database.
#[tool]
fn read(db: &State<Db>) -> &'static str {
    let _ = db;
    "read"
}

fn main() {}
