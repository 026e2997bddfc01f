use mcp_runtime::prelude::*;

fn schema() -> mcp_runtime::serde_json::Value {
    mcp_runtime::serde_json::json!({"type": "object"})
}

#[tool(input_schema = schema)]
fn route(#[header] region: String) -> String {
    region
}

fn main() {}
