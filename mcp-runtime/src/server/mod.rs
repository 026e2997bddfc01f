//! The server: its builder, its catalogue, and the dispatch of messages.

mod dispatch;
pub(crate) mod session;
mod tool_call;

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::protocol::{Implementation, ProtocolVersion};
use crate::registry::{Catalogue, CatalogueError, ToolDescriptor};

pub(crate) use dispatch::Routed;

/// The default number of items on one page of a list result.
pub const DEFAULT_PAGE_SIZE: usize = 200;

/// The default limit on one incoming message, in bytes.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// Starts a [`ServerBuilder`] named after the crate that calls it (its `Cargo.toml` name and
/// version become `serverInfo`).
///
/// ```standalone_crate
/// let server = mcp_runtime::server!().instructions("Arithmetic helpers").build().unwrap();
/// assert_eq!(server.info().name, env!("CARGO_PKG_NAME"));
/// ```
#[macro_export]
macro_rules! server {
    () => {
        $crate::Server::builder(
            ::std::env!("CARGO_PKG_NAME"),
            ::std::env!("CARGO_PKG_VERSION"),
        )
    };
}

/// A built MCP server: an immutable catalogue and settings, cheap to clone and to share
/// between connections.
#[derive(Clone)]
pub struct Server {
    inner: Arc<ServerInner>,
}

struct ServerInner {
    info: Implementation,
    catalogue: Catalogue,
    page_size: usize,
    max_message_bytes: usize,
    /// The `initialize` result, serialised once per revision.
    initialize_results: [String; 4],
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.inner.info)
            .field("tools", &self.inner.catalogue.tools().len())
            .finish_non_exhaustive()
    }
}

/// Configures and builds a [`Server`]; usually started with [`server!`](crate::server!).
///
/// ```
/// use mcp_runtime::prelude::*;
///
/// /// Say hello.
/// #[tool]
/// fn hello(name: String) -> String { format!("Hello, {name}!") }
///
/// # fn main() {
/// let server = mcp_runtime::server!()
///     .title("Greeter")
///     .instructions("Greets people.")
///     .auto_register(false)
///     .tools(mcp_runtime::tools![hello])
///     .build()
///     .unwrap();
/// assert_eq!(server.tool_names(), ["hello"]);
/// # }
/// ```
#[must_use]
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    tools: Vec<&'static ToolDescriptor>,
    auto_register: bool,
    page_size: usize,
    max_message_bytes: usize,
}

impl Server {
    /// A builder for a server with this name and version.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder {
            info: Implementation::new(name, version),
            instructions: None,
            tools: Vec::new(),
            auto_register: cfg!(feature = "auto-register"),
            page_size: DEFAULT_PAGE_SIZE,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
        }
    }

    /// The server's name and version, as sent in `serverInfo`.
    pub fn info(&self) -> &Implementation {
        &self.inner.info
    }

    /// The names of the registered tools, in the order `tools/list` gives them.
    pub fn tool_names(&self) -> Vec<&'static str> {
        self.inner
            .catalogue
            .tools()
            .iter()
            .map(|t| t.descriptor.name)
            .collect()
    }

    /// The limit on one incoming message, in bytes.
    pub fn max_message_bytes(&self) -> usize {
        self.inner.max_message_bytes
    }

    pub(crate) fn catalogue(&self) -> &Catalogue {
        &self.inner.catalogue
    }
}

impl ServerBuilder {
    /// Sets the human-readable title sent in `serverInfo`.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// Sets the description sent in `serverInfo` (2025-11-25 and later).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.info.description = Some(description.into());
        self
    }

    /// Sets the instructions sent at `initialize`: how and when to use this server's tools.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Adds tools explicitly (see [`tools!`](crate::tools!)). A tool that is also collected
    /// automatically is served once.
    pub fn tools(mut self, tools: impl IntoIterator<Item = &'static ToolDescriptor>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// Whether to serve every `#[tool]` of the program (on by default with the
    /// `auto-register` feature). Off, only the tools given to [`ServerBuilder::tools`] are
    /// served.
    pub fn auto_register(mut self, on: bool) -> Self {
        self.auto_register = on && cfg!(feature = "auto-register");
        self
    }

    /// Sets how many items one page of a list result holds.
    pub fn page_size(mut self, items: usize) -> Self {
        self.page_size = items.max(1);
        self
    }

    /// Sets the limit on one incoming message, in bytes.
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }

    /// Builds the server: collects, sorts and checks the catalogue and builds every schema.
    pub fn build(self) -> Result<Server, CatalogueError> {
        let catalogue = Catalogue::build(&self.tools, self.auto_register)?;
        let initialize_results = ProtocolVersion::HANDSHAKE
            .map(|v| initialize_result(&self.info, self.instructions.as_deref(), &catalogue, v));
        Ok(Server {
            inner: Arc::new(ServerInner {
                info: self.info,
                catalogue,
                page_size: self.page_size,
                max_message_bytes: self.max_message_bytes,
                initialize_results,
            }),
        })
    }

    /// Builds the server and serves it on standard input and output until the client closes
    /// standard input.
    pub async fn serve_stdio(self) -> crate::Result<()> {
        self.build()?.serve_stdio().await
    }
}

/// The `initialize` result for one revision; capabilities follow what is registered.
fn initialize_result(
    info: &Implementation,
    instructions: Option<&str>,
    catalogue: &Catalogue,
    version: ProtocolVersion,
) -> String {
    let mut capabilities = serde_json::Map::new();
    capabilities.insert("logging".into(), Value::Object(Default::default()));
    if !catalogue.is_empty() {
        capabilities.insert("tools".into(), serde_json::json!({ "listChanged": false }));
    }
    let mut server_info = info.clone();
    if !version.has_titles() {
        server_info.title = None;
    }
    if !version.has_icons() {
        server_info.description = None;
        server_info.website_url = None;
    }
    let mut result = serde_json::json!({
        "protocolVersion": version.as_str(),
        "capabilities": capabilities,
        "serverInfo": server_info,
    });
    if let Some(instructions) = instructions {
        result["instructions"] = instructions.into();
    }
    result.to_string()
}
