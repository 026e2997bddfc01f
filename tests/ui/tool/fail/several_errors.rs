use mcp_runtime::prelude::*;

#[tool(nmae = "x", name = "has space", annotations(idempotent, idempotent))]
unsafe fn broken<T>((a, b): (i32, i32), text: &str, value: impl ToString) -> impl ToString {
    let _ = (a, b, text);
    value
}

fn main() {}
