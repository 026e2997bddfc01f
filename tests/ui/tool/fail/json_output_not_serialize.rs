use mcp_runtime::prelude::*;

/// Derives `JsonSchema` but not `Serialize`.
#[derive(mcp_runtime::schemars::JsonSchema)]
#[schemars(crate = "mcp_runtime::schemars")]
struct Forecast {
    celsius: f64,
}

#[tool(description = "The forecast of a city.")]
fn forecast(city: String) -> Result<Json<Forecast>, ToolError> {
    let _ = city;
    Ok(Json(Forecast { celsius: 21.0 }))
}

fn main() {}
