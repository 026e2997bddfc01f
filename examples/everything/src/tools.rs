//! Tools whose results the scenarios check: every content type, a tool error, logging,
//! progress, and a response stream closed mid-call.

use std::time::Duration;

use mcp_runtime::prelude::*;
use mcp_runtime::tokio;

use crate::media::{RED_PIXEL_PNG, SILENT_WAV};

/// Tests simple text content response.
#[tool(annotations(read_only))]
fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Tests image content response: a 1×1 red PNG.
#[tool(annotations(read_only))]
fn test_image_content() -> Image {
    Image::png(RED_PIXEL_PNG)
}

/// Tests audio content response: one silent WAV sample.
#[tool(annotations(read_only))]
fn test_audio_content() -> Audio {
    Audio::wav(SILENT_WAV)
}

/// Tests embedded resource content response.
#[tool(annotations(read_only))]
fn test_embedded_resource() -> EmbeddedResource {
    EmbeddedResource::text(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )
}

/// Tests response with multiple content types (text, image, resource).
#[tool(annotations(read_only))]
fn test_multiple_content_types() -> Vec<Content> {
    vec![
        Content::text("Multiple content types test:"),
        Image::png(RED_PIXEL_PNG).into(),
        EmbeddedResource::text(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        )
        .into(),
    ]
}

/// How long the logging and progress tools wait between two notifications, so that they
/// arrive one by one while the call is running.
const STEP: Duration = Duration::from_millis(50);

/// Tests tool that emits log messages during execution.
#[tool]
async fn test_tool_with_logging(ctx: Context) -> &'static str {
    ctx.info("Tool execution started").await;
    tokio::time::sleep(STEP).await;
    ctx.info("Tool processing data").await;
    tokio::time::sleep(STEP).await;
    ctx.info("Tool execution completed").await;
    "Tool with logging executed successfully"
}

/// Tests tool that reports progress notifications.
#[tool]
async fn test_tool_with_progress(ctx: Context) -> &'static str {
    ctx.progress(0.0, Some(100.0), "Completed step 0 of 100".to_owned())
        .await;
    tokio::time::sleep(STEP).await;
    ctx.progress(50.0, Some(100.0), "Completed step 50 of 100".to_owned())
        .await;
    tokio::time::sleep(STEP).await;
    ctx.progress(100.0, Some(100.0), "Completed step 100 of 100".to_owned())
        .await;
    "Tool with progress executed successfully"
}

/// Tests error response handling.
#[tool]
fn test_error_handling() -> Result<String, ToolError> {
    Err(ToolError::new(
        "This tool intentionally returns an error for testing",
    ))
}

/// When the client may reconnect after `test_reconnection` closes its stream.
const RECONNECT_AFTER: Duration = Duration::from_millis(500);

/// Tests SSE stream disconnection and client reconnection (SEP-1699). Server will close the
/// stream mid-call and send the result after client reconnects.
#[tool]
async fn test_reconnection(ctx: Context) -> &'static str {
    // Over Streamable HTTP the result is kept and sent on the stream the client resumes with
    // `Last-Event-ID`; over standard input and output this does nothing.
    ctx.close_stream(Some(RECONNECT_AFTER));
    tokio::time::sleep(Duration::from_millis(100)).await;
    "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."
}

/// Tool with JSON Schema 2020-12 features
#[tool(args, input_schema = json_schema_2020_12_input)]
fn json_schema_2020_12_tool(args: Contact) -> String {
    format!("JSON Schema 2020-12 tool called with: {args:?}")
}

/// The arguments of `json_schema_2020_12_tool`, as its hand-written schema names them.
#[derive(Debug, mcp_runtime::serde::Deserialize)]
#[serde(
    crate = "mcp_runtime::serde",
    rename_all = "camelCase",
    deny_unknown_fields
)]
#[allow(dead_code)] // read through `Debug` only
struct Contact {
    name: Option<String>,
    address: Option<Address>,
    contact_method: Option<String>,
    phone: Option<String>,
    email: Option<String>,
}

#[derive(Debug, mcp_runtime::serde::Deserialize)]
#[serde(crate = "mcp_runtime::serde", deny_unknown_fields)]
#[allow(dead_code)] // read through `Debug` only
struct Address {
    street: Option<String>,
    city: Option<String>,
}

/// The input schema of SEP-1613 and SEP-2106: `$defs` with an `$anchor`, `$ref`,
/// composition (`allOf`/`anyOf`) and conditional (`if`/`then`/`else`) keywords, served as
/// written.
fn json_schema_2020_12_input() -> mcp_runtime::serde_json::Value {
    mcp_runtime::serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {
                    "street": { "type": "string" },
                    "city": { "type": "string" }
                }
            }
        },
        "properties": {
            "name": { "type": "string" },
            "address": { "$ref": "#/$defs/address" },
            "contactMethod": { "type": "string", "enum": ["phone", "email"] },
            "phone": { "type": "string" },
            "email": { "type": "string" }
        },
        "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
        "if": {
            "properties": { "contactMethod": { "const": "phone" } },
            "required": ["contactMethod"]
        },
        "then": { "required": ["phone"] },
        "else": { "required": ["email"] },
        "additionalProperties": false
    })
}

/// Changes the tool list (takes this tool away and puts it back), so that every client
/// following it hears `notifications/tools/list_changed` once.
#[tool]
fn test_trigger_tool_change(ctx: Context) -> &'static str {
    if let Some(server) = ctx.server() {
        server.disable_tool("test_trigger_tool_change");
        server.enable_tool("test_trigger_tool_change");
    }
    "The tool list changed"
}

/// Changes the prompt list (takes `test_simple_prompt` away and puts it back), so that every
/// client following it hears `notifications/prompts/list_changed` once.
#[tool]
fn test_trigger_prompt_change(ctx: Context) -> &'static str {
    if let Some(server) = ctx.server() {
        server.disable_prompt("test_simple_prompt");
        server.enable_prompt("test_simple_prompt");
    }
    "The prompt list changed"
}
