use mcp_runtime::prelude::*;

#[tool]
fn route(#[header("Tenant Id")] tenant: String, #[header = "Zone"] zone: String) -> String {
    format!("{tenant} {zone}")
}

fn main() {}
