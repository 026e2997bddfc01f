use mcp_runtime::prelude::*;

#[resource("diff://{name}/against/{name}")]
fn diff(name: String) -> String {
    format!("{name} against itself")
}

fn main() {}
