//! `#[mcp_runtime::main]` on the runtime the features choose, with Tokio's options, and
//! `#[mcp_runtime::test]`.

#[mcp_runtime::main]
async fn main() -> mcp_runtime::Result<()> {
    let handle = mcp_runtime::tokio::spawn(async { 2 + 2 });
    assert_eq!(handle.await.unwrap(), 4);
    // With options, it is `#[tokio::main(…)]`: a plain function that runs its own runtime.
    let _: fn() = other;
    Ok(())
}

#[mcp_runtime::main(flavor = "current_thread")]
async fn other() {
    mcp_runtime::tokio::task::yield_now().await;
}
