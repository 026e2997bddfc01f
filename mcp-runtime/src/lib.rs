//! Write [Model Context Protocol](https://modelcontextprotocol.io) servers as ordinary Rust
//! functions.
//!
//! ```no_run
//! use mcp_runtime::prelude::*;
//!
//! /// Add two integers.
//! #[tool(annotations(read_only))]
//! fn add(
//!     /// The first addend.
//!     a: i64,
//!     /// The second addend.
//!     b: i64,
//! ) -> i64 {
//!     a + b
//! }
//!
//! #[mcp_runtime::main]
//! async fn main() -> mcp_runtime::Result<()> {
//!     mcp_runtime::server!().serve_stdio().await
//! }
//! ```
//!
//! Each `#[tool]` function is registered automatically (the `auto-register` feature, on by
//! default) and stays an ordinary function: `add(1, 2)` still works in your own tests. The
//! guide in the repository's `book/` explains every feature.

#![warn(missing_docs)]

mod content;
mod context;
mod error;
pub mod protocol;
mod registry;
pub mod schema;
mod server;
mod transport;

pub use content::{
    Annotations, Audio, CallToolResult, Content, EmbeddedResource, Image, IntoToolResult, Json,
    ResourceContents, ResourceLink, Role, Text, ToolError,
};
pub use context::Context;
pub use error::{Error, Result};
pub use mcp_macros::{main, test, tool};
pub use protocol::{Implementation, LogLevel, ProtocolVersion, ToolAnnotations};
pub use registry::{Arguments, CatalogueError, SourceLocation, Tool, ToolDescriptor, ToolFuture};
pub use server::{DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_PAGE_SIZE, Server, ServerBuilder};
pub use transport::memory::MemoryClient;

/// Re-exported so that types of your own can derive `Serialize`/`Deserialize` without a
/// direct dependency: add `#[serde(crate = "mcp_runtime::serde")]` to the derive.
pub use serde;

/// Re-exported so that types of your own can derive `JsonSchema` without a direct
/// dependency: add `#[schemars(crate = "mcp_runtime::schemars")]` to the derive.
pub use schemars;

/// Re-exported for tools that build or inspect JSON values.
pub use serde_json;

/// The async runtime the server runs on, for spawning tasks and timers in tools.
pub use tokio;

/// The book's chapters, compiled and run as documentation tests.
#[cfg(doctest)]
mod book {
    #[doc = include_str!("../../README.md")]
    struct Readme;
    #[doc = include_str!("../../book/src/introduction.md")]
    struct Introduction;
    #[doc = include_str!("../../book/src/quickstart.md")]
    struct Quickstart;
    #[doc = include_str!("../../book/src/tools.md")]
    struct Tools;
}

/// The names most servers need: `use mcp_runtime::prelude::*;`.
pub mod prelude {
    pub use crate::{
        Audio, CallToolResult, Content, Context, EmbeddedResource, Image, IntoToolResult, Json,
        LogLevel, ResourceLink, Server, ToolError, tool,
    };
}

/// What generated code refers to. Not a public API: it changes without notice.
#[doc(hidden)]
pub mod __private {
    pub use inventory;
    pub use schemars;
    pub use serde;
    pub use serde_json;
    pub use tokio;

    pub use crate::content::{CallToolResult, IntoToolResult};
    pub use crate::context::Context;
    pub use crate::protocol::ToolAnnotations;
    pub use crate::registry::{
        Arguments, SourceLocation, Tool, ToolDescriptor, ToolEntry, ToolFuture,
    };

    /// The `inputSchema` of an argument type.
    pub fn input_schema<T: schemars::JsonSchema>() -> serde_json::Value {
        crate::schema::input_schema_for::<T>()
    }

    /// The `inputSchema` of a tool's generated argument struct (its name is no title).
    pub fn fields_schema<T: schemars::JsonSchema>() -> serde_json::Value {
        let mut schema = crate::schema::input_schema_for::<T>();
        if let Some(obj) = schema.as_object_mut() {
            obj.remove("title");
        }
        schema
    }

    /// The `outputSchema` of a return type.
    pub fn output_schema<T: IntoToolResult>() -> Option<serde_json::Value> {
        T::output_schema()
    }

    /// Asserts, at the parameter's own span, that its type can be a tool parameter.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a tool parameter",
        label = "this type must implement `serde::Deserialize` and `schemars::JsonSchema`",
        note = "derive both on your type: `#[derive(serde::Deserialize, schemars::JsonSchema)]`"
    )]
    pub trait ToolParameter {}
    impl<T: serde::de::DeserializeOwned + schemars::JsonSchema> ToolParameter for T {}

    pub const fn assert_tool_parameter<T: ToolParameter>() {}

    /// Asserts, at the return type's own span, that it converts into a tool result.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` is not a valid tool return type",
        label = "this type does not implement `IntoToolResult`",
        note = "return text, a number, `()`, `Json<T>`, content (`Image`, `Audio`, …), `Vec<Content>`, `CallToolResult`, or a `Result` of one of these; see the book's chapter on tools"
    )]
    pub trait ToolReturn {}
    impl<T: IntoToolResult> ToolReturn for T {}

    pub const fn assert_tool_return<T: ToolReturn>() {}

    /// Registers a tool with the automatic registry (when the `auto-register` feature is on).
    #[cfg(feature = "auto-register")]
    #[macro_export]
    #[doc(hidden)]
    macro_rules! __submit_tool {
        ($descriptor:expr) => {
            $crate::__private::inventory::submit! { $crate::__private::ToolEntry($descriptor) }
        };
    }

    /// Registers a tool with the automatic registry (when the `auto-register` feature is on).
    #[cfg(not(feature = "auto-register"))]
    #[macro_export]
    #[doc(hidden)]
    macro_rules! __submit_tool {
        ($descriptor:expr) => {};
    }

    pub use crate::__submit_tool as submit_tool;
}
