//! `#[tool(task)]`, `#[tool(task = "required")]` and `#[header]` parameters.

use std::time::Duration;

use mcp_runtime::prelude::*;

/// Builds for a while; a task when the client supports tasks.
#[tool(task)]
async fn build(target: String) -> String {
    mcp_runtime::tokio::time::sleep(Duration::from_millis(1)).await;
    format!("built {target}")
}

/// Only ever a task, stopped after ten minutes.
#[tool(task = "required", timeout = "10m", annotations(idempotent))]
async fn migrate() -> &'static str {
    "migrated"
}

/// Routed by region and tenant.
#[tool]
fn query(
    /// The region, mirrored into `Mcp-Param-Region`.
    #[header]
    region: String,
    /// The tenant, mirrored into `Mcp-Param-Tenant-Id`.
    #[header]
    tenant_id: Option<i64>,
    #[header("Dry")] dry_run: Option<bool>,
    sql: String,
) -> String {
    format!("{region} {tenant_id:?} {dry_run:?} {sql}")
}

fn main() {
    use mcp_runtime::__private::Tool;
    assert_eq!(
        <build as Tool>::DESCRIPTOR.task,
        mcp_runtime::tasks::TaskSupport::Optional
    );
    assert_eq!(
        <migrate as Tool>::DESCRIPTOR.task,
        mcp_runtime::tasks::TaskSupport::Required
    );
    assert_eq!(
        <migrate as Tool>::DESCRIPTOR.timeout,
        Some(std::time::Duration::from_secs(600))
    );
    assert_eq!(<build as Tool>::DESCRIPTOR.timeout, None);
    let schema = (<query as Tool>::DESCRIPTOR.input_schema)();
    assert_eq!(schema["properties"]["region"]["x-mcp-header"], "Region");
    assert_eq!(
        schema["properties"]["tenant_id"]["x-mcp-header"],
        "Tenant-Id"
    );
    assert_eq!(schema["properties"]["dry_run"]["x-mcp-header"], "Dry");
    assert!(schema["properties"]["sql"].get("x-mcp-header").is_none());
    let server = mcp_runtime::server!().build().unwrap();
    assert_eq!(server.tool_names(), ["build", "migrate", "query"]);
}
