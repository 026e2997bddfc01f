//! A first MCP server: arithmetic, text, a structured result, a tool error, progress and
//! logging. Run it with `cargo run -p quickstart`; it speaks MCP on standard input and output.

use mcp_runtime::prelude::*;
use mcp_runtime::{schemars, serde};

/// Add two integers.
#[tool(annotations(read_only, idempotent))]
fn add(
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
) -> i64 {
    a + b
}

/// Divide one number by another.
#[tool(annotations(read_only, idempotent))]
fn divide(
    /// The dividend.
    dividend: f64,
    /// The divisor; must not be zero.
    divisor: f64,
) -> Result<f64, ToolError> {
    if divisor == 0.0 {
        return Err(ToolError::new(
            "cannot divide by zero: pick a non-zero divisor",
        ));
    }
    Ok(dividend / divisor)
}

/// Reverse a piece of text, character by character.
#[tool(annotations(read_only))]
fn reverse(
    /// The text to reverse.
    text: String,
) -> String {
    text.chars().rev().collect()
}

/// Summary statistics of a list of numbers.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct Statistics {
    /// How many numbers there were.
    count: usize,
    /// The smallest number.
    min: f64,
    /// The largest number.
    max: f64,
    /// The arithmetic mean.
    mean: f64,
}

/// Count, minimum, maximum and mean of a list of numbers.
#[tool(title = "Statistics", annotations(read_only))]
fn statistics(
    /// The numbers; at least one.
    numbers: Vec<f64>,
) -> Result<Json<Statistics>, ToolError> {
    if numbers.is_empty() {
        return Err(ToolError::new("`numbers` must hold at least one number"));
    }
    let min = numbers.iter().copied().fold(f64::INFINITY, f64::min);
    let max = numbers.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mean = numbers.iter().sum::<f64>() / numbers.len() as f64;
    Ok(Json(Statistics {
        count: numbers.len(),
        min,
        max,
        mean,
    }))
}

/// Count down from `from` to zero, reporting progress and logging each step.
#[tool]
async fn countdown(
    ctx: Context,
    /// Where to start; at most 100.
    from: u32,
) -> Result<String, ToolError> {
    if from > 100 {
        return Err(ToolError::new("`from` must be at most 100"));
    }
    for step in 0..=from {
        ctx.progress(
            f64::from(step),
            Some(f64::from(from)),
            format!("{} left", from - step),
        )
        .await;
        ctx.debug(format!("tick {}", from - step)).await;
    }
    ctx.info("lift-off").await;
    Ok(format!("counted down from {from}"))
}

#[mcp_runtime::main]
async fn main() -> mcp_runtime::Result<()> {
    mcp_runtime::server!()
        .instructions("Arithmetic, text and statistics helpers.")
        .serve()
        .await
}
