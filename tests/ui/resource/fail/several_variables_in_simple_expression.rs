use mcp_runtime::prelude::*;

#[resource("map://tiles/{x,y}")]
fn tile(x: u32, y: u32) -> String {
    format!("tile {x},{y}")
}

fn main() {}
