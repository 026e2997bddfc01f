use mcp_runtime::prelude::*;

#[resource("sessions://{ctx}")]
fn session(ctx: Context) -> String {
    let _ = ctx;
    "session".to_owned()
}

fn main() {}
