//! `schema_profile = "…"`: a tool always sent in one schema profile, whatever the client.

// Tools here go without descriptions for brevity: the warning that asks for one is checked
// on its own (`ui.rs`).
#![allow(deprecated)]

use mcp_runtime::prelude::*;
use mcp_runtime::schema::SchemaProfile;
use mcp_runtime::serde_json::json;
use mcp_runtime::{ProtocolVersion, Tool};

/// Search the notes.
#[tool(schema_profile = "openai-strict")]
fn search(query: String, limit: Option<u32>) -> String {
    format!("{query} {limit:?}")
}

/// Add two integers.
#[tool(schema_profile = "draft-07", annotations(read_only))]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[tool(schema_profile = "default")]
fn pinned_default() {}

#[tool]
fn plain() {}

fn main() {
    assert_eq!(
        <search as Tool>::DESCRIPTOR.schema_profile,
        Some(SchemaProfile::OpenAiStrict)
    );
    assert_eq!(
        <add as Tool>::DESCRIPTOR.schema_profile,
        Some(SchemaProfile::Draft07)
    );
    assert_eq!(
        <pinned_default as Tool>::DESCRIPTOR.schema_profile,
        Some(SchemaProfile::Default)
    );
    assert_eq!(<plain as Tool>::DESCRIPTOR.schema_profile, None);
    assert_eq!(search("notes".into(), None), "notes None");

    let server = mcp_runtime::server!().build().unwrap();
    let list = mcp_runtime::testing::tools_list_for_client(
        &server,
        ProtocolVersion::LATEST_HANDSHAKE,
        "claude-ai",
    );
    let search = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "search")
        .unwrap();
    assert_eq!(search["inputSchema"]["required"], json!(["query", "limit"]));
    assert_eq!(search["inputSchema"]["additionalProperties"], false);
}
