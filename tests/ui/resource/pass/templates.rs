//! Resource templates: `{var}` (one path segment), `{+path}` (several), `{?q,limit}` (an
//! optional query, bound to `Option` parameters), a `Context` next to the variables, a type of
//! the user's own implementing `FromStr`, `list = f` and `complete(var = f)`.

use std::str::FromStr;

use mcp_runtime::prelude::*;
use mcp_runtime::serde_json::{Value, json};
use mcp_runtime::{CompletionContext, ResourceItem};

/// A table name: lowercase letters and `_` only.
struct TableName(String);

impl FromStr for TableName {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if s.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
            Ok(TableName(s.to_owned()))
        } else {
            Err(format!("`{s}` is not a table name"))
        }
    }
}

/// The DDL of a table.
#[resource(
    "db://tables/{table}/ddl",
    mime = "text/x-sql",
    list = list_tables,
    complete(table = complete_table),
)]
fn table_ddl(table: TableName) -> String {
    format!("CREATE TABLE {} ();", table.0)
}

fn list_tables() -> Vec<Resource> {
    ["users", "orders"]
        .into_iter()
        .map(|t| Resource::new(format!("db://tables/{t}/ddl"), t).mime_type("text/x-sql"))
        .collect()
}

fn complete_table(prefix: &str) -> Vec<String> {
    ["orders", "users"]
        .into_iter()
        .filter(|t| t.starts_with(prefix))
        .map(String::from)
        .collect()
}

/// A row of a table.
#[resource(
    "db://tables/{table}/rows/{id}",
    list = list_rows,
    complete(id = complete_id, table = complete_table),
)]
async fn row(ctx: Context, table: String, id: u64) -> String {
    ctx.debug("reading a row").await;
    format!("{table}#{id}")
}

fn list_rows() -> Result<Vec<Resource>, std::io::Error> {
    Ok(vec![Resource::new("db://tables/users/rows/1", "user 1")])
}

fn complete_id(prefix: &str, context: &CompletionContext) -> Vec<String> {
    let table = context.arguments.get("table").map_or("?", String::as_str);
    vec![format!("{prefix}1 ({table})")]
}

/// A file, by a path that keeps its slashes.
#[resource("files://{+path}")]
fn file(path: String) -> String {
    format!("contents of {path}")
}

/// A search with an optional query.
#[resource("search://items{?q,limit}")]
fn search(q: Option<String>, limit: Option<u32>) -> String {
    format!("q={q:?} limit={limit:?}")
}

/// A raw identifier binds the variable of its name without `r#`.
#[resource("types://{type}")]
fn kind(r#type: String) -> String {
    r#type
}

async fn read(client: &mcp_runtime::MemoryClient, uri: &str) -> Value {
    let result = client
        .request("resources/read", json!({"uri": uri}))
        .await
        .unwrap();
    result["contents"][0]["text"].clone()
}

#[mcp_runtime::main]
async fn main() {
    assert!(<table_ddl as ResourceItem>::DESCRIPTOR.list.is_some());
    assert!(<file as ResourceItem>::DESCRIPTOR.list.is_none());

    let server = mcp_runtime::server!().build().unwrap();
    let client = server.connect_memory();
    client.initialize().await.unwrap();

    assert_eq!(
        read(&client, "db://tables/users/ddl").await,
        "CREATE TABLE users ();"
    );
    assert_eq!(read(&client, "db://tables/users/rows/7").await, "users#7");
    assert_eq!(
        read(&client, "files://src/lib.rs").await,
        "contents of src/lib.rs"
    );
    assert_eq!(read(&client, "search://items").await, "q=None limit=None");
    assert_eq!(
        read(&client, "search://items?q=milk&limit=5").await,
        "q=Some(\"milk\") limit=Some(5)"
    );
    assert_eq!(read(&client, "types://enum").await, "enum");

    // A variable whose text does not parse is invalid params naming it.
    let error = client
        .request("resources/read", json!({"uri": "db://tables/Users/ddl"}))
        .await
        .unwrap_err();
    assert_eq!(error.code, -32602);
    assert!(error.message.contains("`table`"), "{}", error.message);
    assert!(
        error.message.contains("not a table name"),
        "{}",
        error.message
    );

    let templates = client
        .request("resources/templates/list", json!({}))
        .await
        .unwrap();
    let mut uris: Vec<&str> = templates["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["uriTemplate"].as_str().unwrap())
        .collect();
    uris.sort_unstable();
    assert_eq!(
        uris,
        [
            "db://tables/{table}/ddl",
            "db://tables/{table}/rows/{id}",
            "files://{+path}",
            "search://items{?q,limit}",
            "types://{type}",
        ]
    );

    // `list` functions add concrete entries to `resources/list`.
    let listed = client.request("resources/list", json!({})).await.unwrap();
    let mut uris: Vec<&str> = listed["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    uris.sort_unstable();
    assert_eq!(
        uris,
        [
            "db://tables/orders/ddl",
            "db://tables/users/ddl",
            "db://tables/users/rows/1",
        ]
    );

    let complete = |uri: &str, argument: &str, value: &str| {
        json!({
            "ref": {"type": "ref/resource", "uri": uri},
            "argument": {"name": argument, "value": value},
            "context": {"arguments": {"table": "users"}},
        })
    };
    let result = client
        .request(
            "completion/complete",
            complete("db://tables/{table}/ddl", "table", "u"),
        )
        .await
        .unwrap();
    assert_eq!(result["completion"]["values"], json!(["users"]));
    let result = client
        .request(
            "completion/complete",
            complete("db://tables/{table}/rows/{id}", "id", "4"),
        )
        .await
        .unwrap();
    assert_eq!(result["completion"]["values"], json!(["41 (users)"]));
}
