//! What the client's typed calls return: the results of the server methods, read leniently
//! (unknown fields are kept in `extra`, a missing optional field is `None`), so a server of a
//! newer revision still reads.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::content::Content;
use crate::protocol::Implementation;

/// Who the server is and what it offers, as the handshake (`initialize`) or discovery
/// (`server/discover`) told it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ServerIdentity {
    /// The revision both sides speak, e.g. `2025-11-25` or `2026-07-28`.
    pub protocol_version: String,
    /// Whether that revision is the stateless one (2026-07-28): no handshake, every request
    /// carries its own metadata.
    pub stateless: bool,
    /// The server's name and version.
    pub server_info: Implementation,
    /// The server's capabilities, as sent.
    pub capabilities: Map<String, Value>,
    /// The server's instructions for a model, if any.
    pub instructions: Option<String>,
}

impl ServerIdentity {
    /// Whether the server declared the capability `name` (`tools`, `resources`, …).
    pub fn has(&self, name: &str) -> bool {
        self.capabilities.contains_key(name)
    }
}

/// A tool the server offers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolInfo {
    /// The name to call it by.
    pub name: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it does, for a model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of its arguments.
    #[serde(default)]
    pub input_schema: Value,
    /// The JSON Schema of its structured result, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Hints about its behaviour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Every other field, as sent (`_meta`, `icons`, `execution`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A prompt the server offers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PromptInfo {
    /// The name to get it by.
    pub name: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub arguments: Vec<PromptArgumentInfo>,
    /// Every other field, as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One argument of a [`PromptInfo`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PromptArgumentInfo {
    /// Its name.
    pub name: String,
    /// What it means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the prompt needs it.
    #[serde(default)]
    pub required: bool,
}

/// A resource the server lists.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceInfo {
    /// Its URI.
    pub uri: String,
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Every other field, as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A resource template the server lists.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceTemplateInfo {
    /// Its RFC 6570 template.
    pub uri_template: String,
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// What it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Every other field, as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One page of a list, and the cursor of the next page.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Page<T> {
    /// The items of this page.
    pub items: Vec<T>,
    /// The cursor to ask the next page with; `None` on the last page.
    pub next_cursor: Option<String>,
}

/// The result of `tools/call`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CallResult {
    /// The content blocks, as sent (see [`CallResult::contents`] for them typed).
    #[serde(default)]
    pub content: Vec<Value>,
    /// The structured result, when the tool has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool reported a failure (a tool error, not a protocol error).
    #[serde(default)]
    pub is_error: bool,
    /// Every other field, as sent (`_meta`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl CallResult {
    /// The text of every text block, joined by newlines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter(|block| block["type"] == "text")
            .filter_map(|block| block["text"].as_str())
            .collect();
        texts.join("\n")
    }

    /// The content blocks of the kinds this crate knows; others are left out.
    pub fn contents(&self) -> Vec<Content> {
        self.content
            .iter()
            .filter_map(|block| serde_json::from_value(block.clone()).ok())
            .collect()
    }
}

/// The result of `prompts/get`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PromptResult {
    /// A description of the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its messages, as sent (`role` and `content`).
    #[serde(default)]
    pub messages: Vec<Value>,
    /// Every other field, as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of `resources/read`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReadResult {
    /// The contents, as sent (`uri`, `mimeType`, and `text` or `blob`).
    #[serde(default)]
    pub contents: Vec<Value>,
    /// Every other field, as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ReadResult {
    /// The text of every text content, joined by newlines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .contents
            .iter()
            .filter_map(|content| content["text"].as_str())
            .collect();
        texts.join("\n")
    }
}

/// The result of `completion/complete`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CompleteResult {
    /// The suggested values.
    #[serde(default)]
    pub values: Vec<String>,
    /// How many values there are in all, if the server knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether there are more values than these.
    #[serde(default)]
    pub has_more: bool,
}

/// A notification from the server.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Notification {
    /// Its method, e.g. `notifications/tools/list_changed`.
    pub method: String,
    /// Its parameters (`null` when it has none).
    pub params: Value,
}

/// A progress report about a request in flight.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// How far along.
    pub progress: f64,
    /// Out of how much, if known.
    pub total: Option<f64>,
    /// What is going on.
    pub message: Option<String>,
}
