use mcp_runtime::prelude::*;

/// Say where the call came from.
#[tool]
async fn whoami(ctx: &Context) -> String {
    format!("{:?}", ctx.client_info())
}

fn main() {}
