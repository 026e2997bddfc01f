use mcp_runtime::prelude::*;

#[resource(42)]
fn notes() -> String {
    "remember the milk".to_owned()
}

fn main() {}
