//! A tool whose attribute is wrong is reported once, at the mistake: listing it in `tools![…]`
//! or naming it where a `Tool` is expected, even in a constant, adds no second error.
use mcp_runtime::Tool;
use mcp_runtime::prelude::*;

#[tool(version = "2")]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

const fn name_of<T: Tool>() -> &'static str {
    T::DESCRIPTOR.name
}

const ADD: &str = name_of::<add>();

fn main() {
    let tools = mcp_runtime::tools![add];
    let _ = (tools, ADD);
}
