//! Every kind of value a resource may return: text, bytes, `Json<T>`, contents, or a `Result`
//! of one of these, whose `RpcError` (such as `resource_not_found`) keeps its code.

use mcp_runtime::prelude::*;
use mcp_runtime::protocol::RpcError;
use mcp_runtime::serde_json::{Value, json};

/// A row, as JSON.
#[derive(mcp_runtime::serde::Serialize)]
#[serde(crate = "mcp_runtime::serde")]
struct Row {
    id: u64,
}

#[resource("r://owned")]
fn owned() -> String {
    "owned".to_owned()
}

#[resource("r://static", mime = "text/markdown")]
fn static_text() -> &'static str {
    "# static"
}

#[resource("r://bytes", mime = "application/octet-stream")]
fn bytes() -> Vec<u8> {
    vec![0, 1, 2]
}

#[resource("r://blob")]
fn blob() -> Blob {
    Blob(vec![255])
}

#[resource("r://rows/{id}")]
fn row(id: u64) -> Json<Row> {
    Json(Row { id })
}

#[resource("r://contents")]
fn contents() -> ResourceContents {
    ResourceContents::text("r://contents#part", "one part").with_mime_type("text/csv")
}

#[resource("r://several", mime = "text/plain")]
fn several() -> Vec<ResourceContents> {
    vec![
        ResourceContents::text("r://several/1", "first"),
        ResourceContents::blob("r://several/2", [1]),
    ]
}

#[resource("r://maybe/{id}")]
async fn maybe(id: u64) -> Result<String, RpcError> {
    if id == 1 {
        Ok("found".to_owned())
    } else {
        Err(mcp_runtime::resource_not_found(&format!("r://maybe/{id}")))
    }
}

#[resource("r://io")]
fn io() -> Result<Vec<u8>, std::io::Error> {
    Err(std::io::Error::other("disk on fire"))
}

async fn contents_of(client: &mcp_runtime::MemoryClient, uri: &str) -> Value {
    let mut result = client
        .request("resources/read", json!({"uri": uri}))
        .await
        .unwrap();
    result["contents"].take()
}

#[mcp_runtime::main]
async fn main() {
    assert_eq!(owned(), "owned");
    assert_eq!(bytes(), [0, 1, 2]);

    let server = mcp_runtime::server!().build().unwrap();
    let client = server.connect_memory();
    client.initialize().await.unwrap();

    assert_eq!(
        contents_of(&client, "r://owned").await,
        json!([{"uri": "r://owned", "text": "owned"}])
    );
    assert_eq!(
        contents_of(&client, "r://static").await,
        json!([{"uri": "r://static", "mimeType": "text/markdown", "text": "# static"}])
    );
    assert_eq!(
        contents_of(&client, "r://bytes").await,
        json!([{"uri": "r://bytes", "mimeType": "application/octet-stream", "blob": "AAEC"}])
    );
    assert_eq!(
        contents_of(&client, "r://blob").await,
        json!([{"uri": "r://blob", "blob": "/w=="}])
    );
    assert_eq!(
        contents_of(&client, "r://rows/7").await,
        json!([{"uri": "r://rows/7", "mimeType": "application/json", "text": "{\"id\":7}"}])
    );
    assert_eq!(
        contents_of(&client, "r://contents").await,
        json!([{"uri": "r://contents#part", "mimeType": "text/csv", "text": "one part"}])
    );
    assert_eq!(
        contents_of(&client, "r://several").await,
        json!([
            {"uri": "r://several/1", "mimeType": "text/plain", "text": "first"},
            {"uri": "r://several/2", "mimeType": "text/plain", "blob": "AQ=="},
        ])
    );
    assert_eq!(
        contents_of(&client, "r://maybe/1").await,
        json!([{"uri": "r://maybe/1", "text": "found"}])
    );

    let error = client
        .request("resources/read", json!({"uri": "r://maybe/2"}))
        .await
        .unwrap_err();
    assert_eq!(error.code, -32002);
    assert_eq!(error.data, Some(json!({"uri": "r://maybe/2"})));

    let error = client
        .request("resources/read", json!({"uri": "r://io"}))
        .await
        .unwrap_err();
    assert_eq!(error.code, -32603);
    assert!(error.message.contains("disk on fire"), "{}", error.message);
}
