//! Wire types of the Model Context Protocol and the JSON-RPC 2.0 envelope.

mod cache;
pub(crate) mod deep;
mod json_text;
mod jsonrpc;
pub(crate) use json_text::write_json_string;
pub(crate) use jsonrpc::spare;
pub(crate) mod messages;
mod methods;
mod version;

pub use cache::CacheHint;
pub(crate) use jsonrpc::{
    Envelope, Incoming, Text, error_frame, notification_frame, response_frame,
    response_frame_around, result_json_sized,
};
pub use jsonrpc::{Frame, RequestId, RpcError, code};
pub use messages::{Implementation, LogLevel, ProgressToken, Root, ToolAnnotations};
pub(crate) use methods::{ALL_LISTS, ListKind, Method, Needs};
pub use version::{ProtocolVersion, UnknownProtocolVersion};

/// The `_meta` key under which the runtime's refusals (a path outside the roots, a call the
/// policy denies, a tool error with a code) carry their machine-readable form.
pub const ERROR_META_KEY: &str = "mcp-runtime/error";
