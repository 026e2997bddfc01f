//! Both of what `main` gets wrong are reported at once.
#[mcp_runtime::main]
fn main(args: Vec<String>) {
    let _ = args;
}
