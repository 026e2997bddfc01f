//! Tools of the tasks extension's scenarios (`tasks-*`, SEP-2663): `#[tool(task)]` calls
//! become tasks the first time they wait, when the client declares the extension; the
//! others are answered directly.

use std::time::Duration;

use mcp_runtime::prelude::*;
use mcp_runtime::{schemars, serde, tokio};

/// Greets someone; never a task.
#[tool(annotations(read_only))]
fn greet(
    /// Who to greet.
    name: String,
) -> String {
    format!("Hello, {name}!")
}

/// Computes for a while: a task for clients that support tasks, answered directly for the
/// others.
#[tool(task)]
async fn slow_compute(
    /// How long the computation takes, in seconds.
    seconds: Option<u64>,
    /// A label for the result.
    label: Option<String>,
) -> String {
    let seconds = seconds.unwrap_or(1);
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    let label = label.unwrap_or_else(|| "job".to_owned());
    format!("Computation \"{label}\" completed after {seconds} seconds. Result: 42.")
}

/// A job that only runs as a task and ends with a tool error.
#[tool(task = "required")]
async fn failing_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(ToolError::new(
        "The job failed: the input could not be processed",
    ))
}

/// A job that only runs as a task and ends with a protocol (JSON-RPC) error.
#[tool(task = "required")]
async fn protocol_error_job() -> CallToolResult {
    tokio::time::sleep(Duration::from_millis(500)).await;
    CallToolResult::protocol_error("Internal error: the job's worker went away")
}

/// A confirmation.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct Confirm {
    /// Whether to go ahead
    confirm: bool,
}

/// Deletes a file once the user confirms: as a task, the question waits in the task.
#[tool(task, annotations(destructive))]
async fn confirm_delete(
    ctx: Context,
    /// The file to delete.
    filename: String,
) -> Result<String, ToolError> {
    ctx.continue_as_task().await;
    let answer = ctx.elicit::<Confirm>(format!("Delete {filename}?")).await?;
    Ok(match answer.accepted() {
        Some(Confirm { confirm: true }) => format!("Deleted {filename}"),
        _ => format!("Kept {filename}"),
    })
}

/// One part of a two-part answer.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct Part {
    /// A name for this part
    name: String,
}

/// Asks two questions at once; the task waits for both answers.
#[tool(task)]
async fn multi_input(ctx: Context) -> Result<String, ToolError> {
    ctx.continue_as_task().await;
    let (first, second) = tokio::join!(
        ctx.elicit::<Part>("The first part"),
        ctx.elicit::<Part>("The second part"),
    );
    let name = |answer: Elicitation<Part>| answer.accepted().map_or("-".into(), |p| p.name);
    Ok(format!("Parts: {}, {}", name(first?), name(second?)))
}

/// The user's name.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct Name {
    /// Your name
    name: String,
}

/// Asks the user's name in the request itself (a multi round-trip request), then works on
/// as a task.
#[tool(task = "required")]
async fn test_tool_with_task(ctx: Context) -> Result<String, ToolError> {
    ctx.name_inputs(["user_name"]);
    let answer = ctx.elicit::<Name>("What is your name?").await?;
    let name = answer.accepted().map_or("stranger".into(), |n| n.name);
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(format!("Hello, {name}!"))
}

/// Echoes a region that HTTP clients mirror into the `Mcp-Param-Region` header
/// (SEP-2243), so load balancers can route on it.
#[tool(annotations(read_only))]
fn test_header_param(
    /// The region to act in.
    #[header]
    region: Option<String>,
) -> String {
    format!("Region: {}", region.as_deref().unwrap_or("(none)"))
}
