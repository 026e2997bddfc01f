use mcp_runtime::prelude::*;

/// Neither `Deserialize` nor `JsonSchema`.
struct City {
    name: String,
}

/// The weather of a city.
#[tool]
fn weather(days: u8, city: City) -> String {
    format!("sunny in {} for {days} days", city.name)
}

fn main() {}
