//! Static resources (a URI without variables) with every key of `#[resource("uri", …)]` that
//! applies to them: `name`, `title`, `description`, `mime`, `size`, `audience(…)`,
//! `priority`, `last_modified`, `icon(…)` and `meta`.

use mcp_runtime::ResourceItem;
use mcp_runtime::prelude::*;
use mcp_runtime::serde_json::json;

/// This doc comment is replaced by the `description` key.
#[resource(
    "file:///notes.txt",
    name = "notes",
    title = "Notes",
    description = "Things to remember.",
    mime = "text/plain",
    size = 17,
    audience(user, assistant),
    priority = 0.75,
    last_modified = "2025-01-12T15:00:58Z",
    icon(
        src = "https://example.com/notes.png",
        mime = "image/png",
        sizes = "48x48"
    ),
    meta = r#"{"team": "docs"}"#
)]
fn read_notes() -> &'static str {
    "remember the milk"
}

/// The name is the function's; the description its doc comment.
#[resource("file:///todo.txt", audience(assistant), priority = 1)]
fn todo() -> String {
    "buy milk".to_owned()
}

#[resource("file:///empty", priority = 0)]
fn empty() -> String {
    String::new()
}

#[mcp_runtime::main]
async fn main() {
    assert_eq!(read_notes(), "remember the milk");

    let d = <read_notes as ResourceItem>::DESCRIPTOR;
    assert_eq!(d.uri, "file:///notes.txt");
    assert_eq!(d.name, "notes");
    assert_eq!(d.title, Some("Notes"));
    assert_eq!(d.description, Some("Things to remember."));
    assert_eq!(d.mime_type, Some("text/plain"));
    assert_eq!(d.size, Some(17));
    assert_eq!(d.audience, [Role::User, Role::Assistant]);
    assert_eq!(d.priority, Some(0.75));
    assert_eq!(d.last_modified, Some("2025-01-12T15:00:58Z"));
    assert_eq!(d.icons[0].sizes, ["48x48"]);
    assert_eq!(d.meta, Some(r#"{"team": "docs"}"#));
    assert!(d.list.is_none());

    let d = <todo as ResourceItem>::DESCRIPTOR;
    assert_eq!(d.name, "todo");
    assert_eq!(
        d.description,
        Some("The name is the function's; the description its doc comment.")
    );
    assert_eq!(d.priority, Some(1.0));
    assert_eq!(<empty as ResourceItem>::DESCRIPTOR.description, None);

    let server = mcp_runtime::server!().build().unwrap();
    let client = server.connect_memory();
    client.initialize().await.unwrap();

    let listed = client.request("resources/list", json!({})).await.unwrap();
    let notes = listed["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uri"] == "file:///notes.txt")
        .unwrap()
        .clone();
    assert_eq!(
        notes,
        json!({
            "uri": "file:///notes.txt",
            "name": "notes",
            "title": "Notes",
            "description": "Things to remember.",
            "mimeType": "text/plain",
            "size": 17,
            "annotations": {
                "audience": ["user", "assistant"],
                "priority": 0.75,
                "lastModified": "2025-01-12T15:00:58Z",
            },
            "icons": [{"src": "https://example.com/notes.png", "mimeType": "image/png", "sizes": ["48x48"]}],
            "_meta": {"team": "docs"},
        })
    );
    assert_eq!(listed["resources"].as_array().unwrap().len(), 3);

    let read = client
        .request("resources/read", json!({"uri": "file:///notes.txt"}))
        .await
        .unwrap();
    assert_eq!(
        read["contents"],
        json!([{"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "remember the milk"}])
    );
}
