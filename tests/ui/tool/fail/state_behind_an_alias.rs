use mcp_runtime::prelude::*;

struct Db;

/// What the macro cannot see: an alias is no `State<…>` to it.
type Database = State<Db>;

/// Reads the database.
#[tool]
fn read(db: Database) -> &'static str {
    let _ = db;
    "read"
}

fn main() {}
