//! Every kind of value a tool may return.

// Tools here go without descriptions for brevity: the warning that asks for one is checked
// on its own (`ui.rs`).
#![allow(deprecated)]

use mcp_runtime::Tool;
use mcp_runtime::prelude::*;

/// A forecast, as structured output.
#[derive(mcp_runtime::serde::Serialize, mcp_runtime::schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct Forecast {
    celsius: f64,
}

#[tool]
fn owned_text() -> String {
    "text".to_owned()
}

#[tool]
fn static_text() -> &'static str {
    "text"
}

#[tool]
fn integer() -> i64 {
    42
}

#[tool]
fn float() -> f64 {
    1.5
}

#[tool]
fn boolean() -> bool {
    true
}

// Written out on purpose: the macro must read an explicit `()` as no result.
#[allow(clippy::unused_unit)]
#[tool]
fn unit() -> () {}

#[tool]
fn nothing() {}

#[tool]
fn structured() -> Json<Forecast> {
    Json(Forecast { celsius: 21.0 })
}

#[tool]
fn image() -> Image {
    Image::png([0x89, b'P', b'N', b'G'])
}

#[tool]
fn audio() -> Audio {
    Audio::wav(b"RIFF")
}

#[tool]
fn resource_link() -> ResourceLink {
    ResourceLink::new("file:///tmp/report.txt", "report")
}

#[tool]
fn embedded_resource() -> EmbeddedResource {
    EmbeddedResource::text("memo://1", "text/plain", "remember the milk")
}

#[tool]
fn content() -> Content {
    Content::text("one block")
}

#[tool]
fn contents() -> Vec<Content> {
    vec![Content::text("a"), Image::png([1]).into()]
}

#[tool]
fn full_result() -> CallToolResult {
    CallToolResult::error("failed on purpose")
}

#[tool]
fn fallible(fail: bool) -> Result<String, ToolError> {
    if fail {
        Err(ToolError::new("failed"))
    } else {
        Ok("ok".to_owned())
    }
}

#[tool]
async fn fallible_structured(path: String) -> Result<Json<Forecast>, std::io::Error> {
    let celsius = std::fs::metadata(path)?.len() as f64;
    Ok(Json(Forecast { celsius }))
}

#[tool]
fn maybe(found: bool) -> Option<String> {
    found.then(|| "found".to_owned())
}

fn main() {
    assert_eq!(owned_text(), "text");
    assert_eq!(integer(), 42);
    assert_eq!(structured().0.celsius, 21.0);
    assert!(full_result().is_error);
    assert!(fallible(true).is_err());
    assert_eq!(maybe(false), None);

    // Structured output has an output schema; everything else has none.
    assert!((<structured as Tool>::DESCRIPTOR.output_schema)().is_some());
    assert!((<fallible_structured as Tool>::DESCRIPTOR.output_schema)().is_some());
    assert!((<owned_text as Tool>::DESCRIPTOR.output_schema)().is_none());
    assert!((<nothing as Tool>::DESCRIPTOR.output_schema)().is_none());

    let server = mcp_runtime::server!().build().unwrap();
    assert_eq!(server.tool_names().len(), 18);
}
