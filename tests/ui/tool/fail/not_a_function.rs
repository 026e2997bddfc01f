use mcp_runtime::prelude::*;

#[tool]
struct Weather {
    city: String,
}

fn main() {}
