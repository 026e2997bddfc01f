#[mcp_runtime::main]
async fn main() -> mcp_runtime::Result<()> {
    // Speaks MCP on standard input and output; log lines go to standard error.
    mcp_runtime::server!() // name and version come from Cargo.toml
        .instructions("Arithmetic and greetings")
        .serve_stdio()
        .await
}
