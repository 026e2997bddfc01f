use mcp_runtime::prelude::*;

/// Does not derive `Serialize`.
struct Row {
    id: u64,
}

#[resource("db://rows/{id}")]
async fn row(id: u64) -> Json<Row> {
    Json(Row { id })
}

fn main() {}
