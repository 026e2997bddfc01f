use mcp_runtime::prelude::*;

#[resource("log://{2fa}")]
fn log() -> String {
    "log".to_owned()
}

fn main() {}
