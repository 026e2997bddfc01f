use mcp_runtime::prelude::*;

#[resource("types://{type}/docs")]
fn type_docs() -> String {
    "docs".to_owned()
}

fn main() {}
