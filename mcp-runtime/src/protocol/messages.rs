//! Parameters and results of the protocol's methods (handshake era).
//!
//! Only what the runtime reads or writes is modelled; unknown fields sent by a client are
//! ignored, as the specification asks of receivers.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The name and version of a client or server (`Implementation` in the schema).
///
/// ```
/// use mcp_runtime::protocol::Implementation;
///
/// let me = Implementation::new("weather", "1.2.0");
/// assert_eq!(serde_json::to_value(&me).unwrap()["name"], "weather");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Human-readable name (2025-06-18 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the implementation does (2025-11-25 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The implementation's web site (2025-11-25 and later).
    #[serde(
        default,
        rename = "websiteUrl",
        skip_serializing_if = "Option::is_none"
    )]
    pub website_url: Option<String>,
}

impl Implementation {
    /// An implementation with a name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            version: version.into(),
            ..Implementation::default()
        }
    }
}

/// `initialize` parameters.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitializeParams {
    pub protocol_version: String,
    #[serde(default)]
    pub capabilities: Map<String, Value>,
    pub client_info: Implementation,
}

/// Parameters of the list methods.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ListParams {
    #[serde(default)]
    pub cursor: Option<String>,
}

/// `tools/call` parameters, with the arguments kept as raw JSON for the tool's own type.
#[derive(Debug, Deserialize)]
pub(crate) struct CallToolParams<'a> {
    #[serde(borrow)]
    pub name: std::borrow::Cow<'a, str>,
    #[serde(borrow, default)]
    pub arguments: Option<&'a serde_json::value::RawValue>,
    #[serde(rename = "_meta", default)]
    pub meta: Option<RequestMeta>,
}

/// The `_meta` of a request, as far as the runtime reads it.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct RequestMeta {
    #[serde(rename = "progressToken", default)]
    pub progress_token: Option<ProgressToken>,
}

/// A progress token: a string or an integer chosen by the client.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ProgressToken {
    /// An integer token.
    Number(i64),
    /// A string token.
    String(String),
}

/// `resources/subscribe` and `resources/unsubscribe` parameters.
#[derive(Debug, Deserialize)]
pub(crate) struct SubscribeParams {
    pub uri: String,
}

/// `notifications/cancelled` parameters.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CancelledParams {
    pub request_id: super::RequestId,
    #[serde(default)]
    pub reason: Option<String>,
}

/// `logging/setLevel` parameters.
#[derive(Debug, Deserialize)]
pub(crate) struct SetLevelParams {
    pub level: LogLevel,
}

/// The severity of a log message (RFC 5424 levels, as MCP uses them).
///
/// ```
/// use mcp_runtime::LogLevel;
/// assert!(LogLevel::Error > LogLevel::Info);
/// assert_eq!(serde_json::to_string(&LogLevel::Warning).unwrap(), "\"warning\"");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detailed debugging information.
    Debug,
    /// Informational messages.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    pub(crate) const fn from_u8(v: u8) -> LogLevel {
        match v {
            0 => LogLevel::Debug,
            1 => LogLevel::Info,
            2 => LogLevel::Notice,
            3 => LogLevel::Warning,
            4 => LogLevel::Error,
            5 => LogLevel::Critical,
            6 => LogLevel::Alert,
            _ => LogLevel::Emergency,
        }
    }
}

/// `notifications/progress` parameters.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProgressParams<'a> {
    pub progress_token: &'a ProgressToken,
    pub progress: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<&'a str>,
}

/// `notifications/message` parameters.
#[derive(Debug, Serialize)]
pub(crate) struct LoggingMessageParams<'a> {
    pub level: LogLevel,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logger: Option<&'a str>,
    pub data: &'a Value,
}

/// Hints about a tool's behaviour (`ToolAnnotations`). All are hints, not guarantees.
///
/// ```
/// use mcp_runtime::ToolAnnotations;
///
/// let a = ToolAnnotations { read_only: Some(true), ..ToolAnnotations::NONE };
/// assert_eq!(serde_json::to_value(a).unwrap(), serde_json::json!({"readOnlyHint": true}));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolAnnotations {
    /// The tool does not modify its environment.
    #[serde(
        rename = "readOnlyHint",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub read_only: Option<bool>,
    /// The tool may perform destructive updates.
    #[serde(
        rename = "destructiveHint",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub destructive: Option<bool>,
    /// Calling the tool again with the same arguments has no additional effect.
    #[serde(
        rename = "idempotentHint",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub idempotent: Option<bool>,
    /// The tool interacts with an open world of external entities.
    #[serde(
        rename = "openWorldHint",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub open_world: Option<bool>,
}

impl ToolAnnotations {
    /// No hints.
    pub const NONE: ToolAnnotations = ToolAnnotations {
        read_only: None,
        destructive: None,
        idempotent: None,
        open_world: None,
    };

    /// Whether no hint is set.
    pub const fn is_empty(&self) -> bool {
        self.read_only.is_none()
            && self.destructive.is_none()
            && self.idempotent.is_none()
            && self.open_world.is_none()
    }
}

/// One root the client exposes: a `file://` URI and an optional name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Root {
    /// The root's URI, e.g. `file:///home/ada/project`.
    pub uri: String,
    /// A human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}
