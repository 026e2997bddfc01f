//! Methods that exist only while their feature is off, to say which feature to enable: a call
//! of `serve_http` without the `http` feature fails to compile with that advice, rather than
//! with "no method named `serve_http`" (the facade approach of tokio's `main_fail`).

use std::future::{Ready, ready};

use crate::{Server, ServerBuilder};

/// Implemented by no type: the bound of the methods below, whose message is the advice.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`serve_http` needs the `http` feature of mcp-runtime",
    label = "Streamable HTTP is compiled only with the `http` feature",
    note = "enable it in Cargo.toml: `mcp-runtime = {{ version = \"…\", features = [\"http\"] }}`, or `cargo add mcp-runtime --features http`",
    note = "or serve standard input and output: `.serve_stdio()`, or `.serve()` to let the command line choose"
)]
pub trait HttpFeatureEnabled {}

// The methods return a future of a type that does not depend on the address, so the unmet
// bound is one error at the call, not one more at each `.await`.
impl ServerBuilder {
    /// Without the `http` feature this method does not compile: its error says to enable
    /// the feature. With it, it builds the server and serves Streamable HTTP at `addr`.
    ///
    /// ```compile_fail
    /// # #[mcp_runtime::main] async fn main() -> mcp_runtime::Result<()> {
    /// mcp_runtime::server!().serve_http("127.0.0.1:8080").await
    /// # }
    /// ```
    pub fn serve_http<A: HttpFeatureEnabled>(self, addr: A) -> Ready<crate::Result<()>> {
        let _ = (self, addr);
        ready(Err(without_http()))
    }
}

impl Server {
    /// Without the `http` feature this method does not compile: its error says to enable
    /// the feature.
    pub fn serve_http<A: HttpFeatureEnabled>(&self, addr: A) -> Ready<crate::Result<()>> {
        let _ = addr;
        ready(Err(without_http()))
    }
}

fn without_http() -> crate::Error {
    crate::Error::Usage("this server was built without the `http` feature of mcp-runtime".into())
}
