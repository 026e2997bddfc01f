#[mcp_runtime::main]
async fn main() -> mcp_runtime::Result<()> {
    // Standard input and output with no arguments; Streamable HTTP at /mcp with
    // `--http 127.0.0.1:8000`.
    mcp_runtime::server!() // name and version come from Cargo.toml
        .instructions("Arithmetic and greetings")
        .serve()
        .await
}
