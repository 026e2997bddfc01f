use mcp_runtime::prelude::*;

/// Run a command.
#[tool(args)]
fn run_command(args: Vec<String>) -> String {
    args.join(" ")
}

fn main() {}
