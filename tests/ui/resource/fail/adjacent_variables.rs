use mcp_runtime::prelude::*;

#[resource("files://{dir}{name}")]
fn file(dir: String, name: String) -> String {
    format!("{dir}{name}")
}

fn main() {}
