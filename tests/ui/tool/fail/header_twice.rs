use mcp_runtime::prelude::*;

#[tool]
fn route(#[header] region: String, #[header("REGION")] zone: String) -> String {
    format!("{region} {zone}")
}

fn main() {}
