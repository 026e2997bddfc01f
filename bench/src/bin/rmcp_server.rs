//! The peer built on rmcp, the official Rust SDK, serving the same `echo` and `add` tools.
//!
//! Two configurations, chosen by the first argument:
//!
//! - none: rmcp as its documentation shows it. `#[tool_handler]` reaches the tools through
//!   `Self::tool_router()`, which builds the router anew for every `tools/call` and
//!   `tools/list`, and the transport is `transport::stdio()`, whose reads and writes each
//!   hop to Tokio's blocking thread pool.
//! - `--fast`: the fastest configuration rmcp offers. The router is built once and kept in a
//!   field (`#[tool_handler(router = self.tool_router)]`), and the transport is
//!   `transport::stdio_pipes()`, which drives the pipes from Tokio's reactor.
//!
//! Depends on rmcp and Tokio only (serde and schemars through rmcp's re-exports), so the
//! build-cost measurement can compile this file alone.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::schemars::JsonSchema;
use rmcp::serde::Deserialize;
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router, transport};

#[derive(Deserialize, JsonSchema)]
#[serde(crate = "rmcp::serde")]
#[schemars(crate = "rmcp::schemars")]
struct EchoArgs {
    /// The text to return.
    text: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(crate = "rmcp::serde")]
#[schemars(crate = "rmcp::schemars")]
struct AddArgs {
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
}

/// The same two tools on each server type: `#[tool_router]` must see the `#[tool]`s in the
/// impl block it is written on.
macro_rules! echo_and_add {
    ($server:ty) => {
        #[tool_router]
        impl $server {
            /// Return the text unchanged.
            #[tool(annotations(read_only_hint = true, idempotent_hint = true))]
            fn echo(&self, Parameters(args): Parameters<EchoArgs>) -> String {
                args.text
            }

            /// Add two integers (wrapping on overflow).
            #[tool(annotations(read_only_hint = true, idempotent_hint = true))]
            fn add(&self, Parameters(args): Parameters<AddArgs>) -> String {
                args.a.wrapping_add(args.b).to_string()
            }
        }
    };
}

/// rmcp's default configuration.
#[derive(Clone)]
struct DefaultServer;

echo_and_add!(DefaultServer);

#[tool_handler]
impl ServerHandler for DefaultServer {}

/// rmcp's fastest configuration.
#[derive(Clone)]
struct FastServer {
    tool_router: ToolRouter<FastServer>,
}

echo_and_add!(FastServer);

#[tool_handler(router = self.tool_router)]
impl ServerHandler for FastServer {}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    match std::env::args().nth(1).as_deref() {
        None => {
            DefaultServer
                .serve(transport::stdio())
                .await?
                .waiting()
                .await?
        }
        Some("--fast") => {
            let server = FastServer {
                tool_router: FastServer::tool_router(),
            };
            server
                .serve(transport::stdio_pipes())
                .await?
                .waiting()
                .await?
        }
        Some(other) => return Err(format!("unknown argument `{other}`; expected `--fast`").into()),
    };
    Ok(())
}
