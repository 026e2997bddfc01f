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

pub mod audit;
mod auth;
#[cfg(feature = "client")]
pub mod client;
pub mod cluster;
mod completion;
mod content;
mod context;
#[cfg(feature = "dynamic")]
mod dynamic;
mod error;
#[cfg(not(feature = "http"))]
mod feature_hints;
mod fence;
mod message_log;
pub mod metrics;
pub mod middleware;
#[cfg(feature = "oauth")]
pub mod oauth;
#[cfg(feature = "otel")]
pub mod otel;
#[cfg(any(feature = "oauth", feature = "otel", feature = "client"))]
mod outbound;
pub mod policy;
mod prompt;
pub mod protocol;
mod quota;
#[cfg(feature = "redis")]
pub mod redis;
mod registry;
mod resource;
pub mod schema;
mod server;
mod session;
mod skills;
mod state;
pub mod tasks;
mod telemetry;
pub mod testing;
mod transport;
mod uri_template;

pub use auth::AuthInfo;
pub use completion::{
    Completer, Completion, CompletionContext, IntoCompletion, MAX_COMPLETION_VALUES,
};
pub use content::{
    Annotations, Audio, CallToolResult, Content, EmbeddedResource, Image, IntoToolResult, Json,
    ResourceContents, ResourceLink, Role, Text, ToolError,
};
pub use context::{
    ClientError, Context, CreateMessageResult, Elicitation, ElicitationAction, IncludeContext,
    ModelHint, ModelPreferences, ProgressMessage, SampleRequest, SamplingContent, SamplingMessage,
    SamplingTool, SessionData, SessionError,
};
#[cfg(feature = "dynamic")]
pub use dynamic::{DynamicPrompt, DynamicResource, DynamicTool, PromptArgument};
pub use error::{Error, Result};
pub use fence::{
    FenceError, FencedDir, FencedEntry, FencedPath, FileIdentity, FileInfo, FileKind, PathRefused,
    RootedPath, Roots, file_uri,
};
pub use mcp_macros::{main, prompt, resource, test, tool, toolbox};
pub use message_log::MessageLog;
pub use prompt::{GetPromptResult, IntoPromptResult, PromptArguments, PromptMessage};
pub use protocol::{
    CacheHint, ERROR_META_KEY, Implementation, LogLevel, ProtocolVersion, Root, ToolAnnotations,
};
pub use registry::{
    Arguments, CatalogueError, CompletionDescriptor, Icon, Prompt, PromptArgumentDescriptor,
    PromptDescriptor, PromptFuture, ResourceDescriptor, ResourceFuture, ResourceItem,
    ResourceLister, ResourceRequest, SourceLocation, Tool, ToolDescriptor, ToolFuture,
};
pub use resource::{Blob, IntoResourceContents, IntoResourceList, Resource, resource_not_found};
pub use schema::SchemaProfile;
pub use server::{
    DEFAULT_CLIENT_REQUEST_TIMEOUT, DEFAULT_MAX_IN_FLIGHT, DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_MAX_NESTING_DEPTH, DEFAULT_PAGE_SIZE, DEFAULT_SHUTDOWN_GRACE, DEFAULT_TASK_TTL,
    MAX_BATCH_ITEMS, MAX_RUNNING_TASKS, MAX_RUNNING_TASKS_PER_OWNER, MAX_SUBSCRIPTIONS,
    MIN_STATE_KEY_BYTES, Server, ServerBuilder,
};
pub use session::SessionVisibility;
pub use skills::{SKILLS_EXTENSION, Skills};
pub use state::{State, Toolbox};
pub use transport::memory::MemoryClient;

/// The Streamable HTTP transport (feature `http`).
#[cfg(feature = "http")]
pub use transport::http;
pub use uri_template::{UriTemplate, UriTemplateError, UriVariables};

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

/// The book's chapters, compiled and run as documentation tests. Every chapter with Rust code
/// is listed here (`book/check-links` fails on one that is not); those that use the HTTP
/// transport only with the `http` feature, which `cargo test` of the whole workspace enables.
#[cfg(doctest)]
mod book {
    macro_rules! chapters {
        ($($(#[$cfg:meta])* $name:ident = $path:literal;)*) => {$(
            $(#[$cfg])*
            #[doc = include_str!(concat!("../../", $path))]
            struct $name;
        )*};
    }

    chapters! {
        Readme = "README.md";
        Introduction = "book/src/introduction.md";
        Quickstart = "book/src/quickstart.md";
        Tools = "book/src/tools.md";
        StructuredOutput = "book/src/structured-output.md";
        Prompts = "book/src/prompts.md";
        Resources = "book/src/resources.md";
        Completions = "book/src/completions.md";
        Context = "book/src/context.md";
        #[cfg(feature = "http")]
        StateAndSessions = "book/src/state-and-sessions.md";
        Middleware = "book/src/middleware.md";
        #[cfg(feature = "dynamic")]
        Dynamic = "book/src/dynamic.md";
        ClientRequests = "book/src/client-requests.md";
        Tasks = "book/src/tasks.md";
        Changes = "book/src/changes.md";
        Schemas = "book/src/schemas.md";
        Registration = "book/src/registration.md";
        #[cfg(feature = "http")]
        Transports = "book/src/transports.md";
        #[cfg(all(feature = "http", feature = "oauth"))]
        Security = "book/src/security.md";
        #[cfg(all(feature = "http", feature = "otel"))]
        Operating = "book/src/operating.md";
        Testing = "book/src/testing.md";
        #[cfg(feature = "redis")]
        Deploying = "book/src/deploying.md";
        #[cfg(feature = "client")]
        Client = "book/src/client.md";
        #[cfg(feature = "client")]
        Composing = "book/src/composing.md";
        Faq = "book/src/faq.md";
    }
}

/// The names most servers need: `use mcp_runtime::prelude::*;`.
pub mod prelude {
    pub use crate::{
        Audio, Blob, CallToolResult, Content, Context, Elicitation, EmbeddedResource, FenceError,
        FencedDir, FencedPath, GetPromptResult, Image, IntoToolResult, Json, LogLevel,
        PromptMessage, Resource, ResourceContents, ResourceLink, Role, RootedPath, Server, State,
        ToolError, prompt, resource, tool, toolbox,
    };
}

/// What generated code refers to. Not a public API: it changes without notice.
#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
