//! Wire types of the Model Context Protocol and the JSON-RPC 2.0 envelope.

pub(crate) mod deep;
mod jsonrpc;
pub(crate) mod messages;
mod version;

pub(crate) use jsonrpc::{Envelope, Incoming, error_frame, notification_frame, response_frame};
pub use jsonrpc::{Frame, RequestId, RpcError, code};
pub use messages::{Implementation, LogLevel, ProgressToken, ToolAnnotations};
pub use version::{ProtocolVersion, UnknownProtocolVersion};
