use mcp_runtime::prelude::*;

#[tool(name = "")]
fn get_weather(city: String) -> String {
    city
}

fn main() {}
