use mcp_runtime::prelude::*;

struct Forecast {
    celsius: f64,
}

#[tool(description = "The forecast of a city.")]
fn forecast(city: String) -> Forecast {
    let _ = city;
    Forecast { celsius: 21.0 }
}

fn main() {}
