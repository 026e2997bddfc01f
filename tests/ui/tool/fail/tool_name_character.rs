use mcp_runtime::prelude::*;

#[tool(name = "get weather")]
fn get_weather(city: String) -> String {
    city
}

fn main() {}
