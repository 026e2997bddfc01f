//! A resource whose URI template is wrong is reported once, at the mistake: listing it in
//! `resources![…]` or naming it where a `ResourceItem` is expected, even in a constant, adds no
//! second error.
use mcp_runtime::ResourceItem;
use mcp_runtime::prelude::*;

#[resource("db://tables/{table-name}/ddl")]
fn table_ddl(table_name: String) -> String {
    format!("CREATE TABLE {table_name} ();")
}

const fn uri_of<T: ResourceItem>() -> &'static str {
    T::DESCRIPTOR.uri
}

const TABLE_DDL: &str = uri_of::<table_ddl>();

fn main() {
    let resources = mcp_runtime::resources![table_ddl];
    let _ = (resources, TABLE_DDL);
}
