//! A gateway: one MCP server made of two others. The quickstart example runs as a child
//! process over stdio, the everything example is reached over Streamable HTTP, and both are
//! mounted under a prefix, so a client sees `quickstart_add`, `everything_test_sampling`, …
//! and one server's requests to its client (sampling, elicitation, roots) reach the client of
//! the gateway.
//!
//! ```text
//! gateway [--http ADDR] [--quickstart COMMAND] [--everything URL]
//! ```
//!
//! `--quickstart` defaults to the `quickstart` binary next to this one, `--everything` to
//! `http://127.0.0.1:3001/mcp` (start it with `everything --http 127.0.0.1:3001`). Without
//! `--http` the gateway itself serves stdio.

use mcp_runtime::client::Mount;

#[mcp_runtime::main]
async fn main() -> mcp_runtime::Result<()> {
    let quickstart = argument("--quickstart").unwrap_or_else(sibling_quickstart);
    let everything =
        argument("--everything").unwrap_or_else(|| "http://127.0.0.1:3001/mcp".to_owned());
    let quickstart = Mount::connect("quickstart", &quickstart).await?;
    let everything = Mount::connect("everything", &everything).await?;
    mcp_runtime::server!()
        .instructions(
            "Two servers behind one: `quickstart_*` does arithmetic and text, `everything_*` exercises every MCP feature.",
        )
        .mount(quickstart)
        .mount(everything)
        .serve()
        .await
}

/// The value after `name` on the command line.
fn argument(name: &str) -> Option<String> {
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == name {
            return args.next();
        }
    }
    None
}

/// The quickstart example built beside this binary (`target/debug/quickstart`).
fn sibling_quickstart() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.join("quickstart")))
        .map_or_else(
            || "quickstart".to_owned(),
            |path| path.display().to_string(),
        )
}
