//! Sync and async resources, public and private, at the crate root and in nested modules:
//! each stays an ordinary function and is registered automatically or explicitly.

use mcp_runtime::prelude::*;
use mcp_runtime::serde_json::json;

/// The schema.
#[resource("db://schema")]
pub fn schema() -> &'static str {
    "CREATE SCHEMA app;"
}

/// Read after yielding once.
#[resource("db://slow")]
async fn slow() -> String {
    mcp_runtime::tokio::task::yield_now().await;
    "slow".to_owned()
}

mod tables {
    use mcp_runtime::prelude::*;

    /// The DDL of a table.
    #[resource("db://tables/{table}/ddl")]
    pub fn table_ddl(table: String) -> String {
        format!("CREATE TABLE {table} ();")
    }

    pub mod rows {
        use mcp_runtime::prelude::*;

        /// A row.
        #[resource("db://tables/{table}/rows/{id}")]
        pub(crate) async fn row(table: String, id: u64) -> String {
            format!("{table}#{id}")
        }
    }
}

async fn uris(server: &Server) -> (Vec<String>, Vec<String>) {
    let client = server.connect_memory();
    client.initialize().await.unwrap();
    let strings = |value: &mcp_runtime::serde_json::Value, list: &str, key: &str| {
        let mut v: Vec<String> = value[list]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r[key].as_str().unwrap().to_owned())
            .collect();
        v.sort_unstable();
        v
    };
    let resources = client.request("resources/list", json!({})).await.unwrap();
    let templates = client
        .request("resources/templates/list", json!({}))
        .await
        .unwrap();
    (
        strings(&resources, "resources", "uri"),
        strings(&templates, "resourceTemplates", "uriTemplate"),
    )
}

#[mcp_runtime::main]
async fn main() {
    assert_eq!(schema(), "CREATE SCHEMA app;");
    assert_eq!(slow().await, "slow");
    assert_eq!(tables::table_ddl("t".to_owned()), "CREATE TABLE t ();");
    assert_eq!(tables::rows::row("t".to_owned(), 1).await, "t#1");

    let server = mcp_runtime::server!().build().unwrap();
    assert_eq!(
        uris(&server).await,
        (
            vec!["db://schema".to_owned(), "db://slow".to_owned()],
            vec![
                "db://tables/{table}/ddl".to_owned(),
                "db://tables/{table}/rows/{id}".to_owned(),
            ]
        )
    );

    let explicit = mcp_runtime::server!()
        .auto_register(false)
        .resources(mcp_runtime::resources![schema, tables::rows::row])
        .build()
        .unwrap();
    assert_eq!(
        uris(&explicit).await,
        (
            vec!["db://schema".to_owned()],
            vec!["db://tables/{table}/rows/{id}".to_owned()]
        )
    );
}
