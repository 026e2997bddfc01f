//! Methods and notifications of a server's own, declared extensions, and the server's own
//! notifications to its clients, through the in-process client.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mcp_runtime::middleware::{LayerResult, McpRequest, Next, from_fn};
use mcp_runtime::protocol::RpcError;
use mcp_runtime::serde::{Deserialize, Serialize};
use mcp_runtime::{CatalogueError, Context, Server, ServerBuilder};
use mcp_tests::memory::connected;
use serde_json::json;

#[derive(Deserialize)]
#[serde(crate = "mcp_runtime::serde")]
struct Reindex {
    collection: String,
    #[serde(default)]
    fail: bool,
}

#[derive(Serialize)]
#[serde(crate = "mcp_runtime::serde")]
struct Reindexed {
    collection: String,
    documents: usize,
}

async fn reindex(ctx: Context, p: Reindex) -> Result<Reindexed, RpcError> {
    if p.fail {
        return Err(RpcError::invalid_params("the collection is locked"));
    }
    ctx.notify("acme/reindexing", json!({"collection": p.collection}))
        .await;
    Ok(Reindexed {
        documents: p.collection.len(),
        collection: p.collection,
    })
}

fn builder(pings: &Arc<AtomicU64>) -> ServerBuilder {
    let pings = Arc::clone(pings);
    mcp_runtime::server!()
        .auto_register(false)
        .method("acme/reindex", reindex)
        .on_notification(
            "acme/ping",
            move |_server: &Server, p: serde_json::Value| {
                pings.fetch_add(p["times"].as_u64().unwrap_or(1), Ordering::SeqCst);
            },
        )
        .extension("com.acme/search", json!({"reindex": true}))
}

#[mcp_runtime::test]
async fn a_method_of_the_servers_own_reads_its_params_and_answers_its_result() {
    let pings = Arc::default();
    let server = builder(&pings).build().unwrap();
    let client = connected(&server).await;
    let done = client
        .request("acme/reindex", json!({"collection": "docs"}))
        .await
        .unwrap();
    assert_eq!(done, json!({"collection": "docs", "documents": 4}));
    // Its notification came before the response.
    let notice = client.next_message().await.unwrap();
    assert_eq!(
        notice,
        json!({"jsonrpc": "2.0", "method": "acme/reindexing", "params": {"collection": "docs"}})
    );
    let refused = client
        .request("acme/reindex", json!({"fail": true, "collection": "x"}))
        .await
        .unwrap_err();
    assert_eq!(
        (refused.code, refused.message.as_str()),
        (-32602, "the collection is locked")
    );
    let unreadable = client
        .request("acme/reindex", json!({"collection": 7}))
        .await
        .unwrap_err();
    assert_eq!(unreadable.code, -32602);
    assert!(
        unreadable.message.contains("invalid type: integer `7`"),
        "{}",
        unreadable.message
    );
    let unknown = client.request("acme/unknown", json!({})).await.unwrap_err();
    assert_eq!(unknown.code, -32601);
}

#[mcp_runtime::test]
async fn a_notification_of_the_servers_own_reaches_its_handler() {
    let pings = Arc::new(AtomicU64::new(0));
    let server = builder(&pings).build().unwrap();
    let client = connected(&server).await;
    client.notify("acme/ping", json!({"times": 3})).await;
    client.notify("acme/ping", json!({})).await;
    // Messages are handled in order: once this is answered, both were handled.
    client
        .request("acme/reindex", json!({"collection": "c"}))
        .await
        .unwrap();
    assert_eq!(pings.load(Ordering::SeqCst), 4);
}

#[mcp_runtime::test]
async fn a_notification_handler_that_panics_leaves_the_connection_serving() {
    let server = builder(&Arc::default())
        .on_notification("acme/explode", |_: &Server, _: serde_json::Value| {
            panic!("the handler exploded")
        })
        .build()
        .unwrap();
    let client = connected(&server).await;
    client.notify("acme/explode", json!({})).await;
    let done = client
        .request("acme/reindex", json!({"collection": "after"}))
        .await
        .unwrap();
    assert_eq!(done["collection"], "after");
}

#[mcp_runtime::test]
async fn custom_methods_pass_through_the_layers_and_serve_the_stateless_era() {
    async fn count(request: McpRequest, next: Next) -> LayerResult {
        let mut result = next.run(request).await?;
        if let Some(documents) = result.get_mut("documents") {
            *documents = json!(documents.as_u64().unwrap_or(0) * 10);
        }
        Ok(result)
    }
    let server = builder(&Arc::default())
        .layer(from_fn(count))
        .build()
        .unwrap();
    let client = connected(&server).await;
    let done = client
        .request("acme/reindex", json!({"collection": "docs"}))
        .await
        .unwrap();
    assert_eq!(done["documents"], 40);
    let stateless = server.connect_memory();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let done = stateless
        .request("acme/reindex", json!({"collection": "ab", "_meta": meta}))
        .await
        .unwrap();
    assert_eq!(done["resultType"], "complete");
    assert_eq!(done["documents"], 20);
}

#[mcp_runtime::test]
async fn extensions_are_declared_in_both_eras_and_the_server_can_notify_every_client() {
    let server = builder(&Arc::default()).build().unwrap();
    let client = server.connect_memory();
    let init = client.initialize().await.unwrap();
    assert_eq!(
        init["capabilities"]["experimental"],
        json!({"com.acme/search": {"reindex": true}})
    );
    let discovered = server
        .connect_memory()
        .request(
            "server/discover",
            json!({"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            }}),
        )
        .await
        .unwrap();
    assert_eq!(
        discovered["capabilities"]["extensions"],
        json!({"com.acme/search": {"reindex": true}})
    );
    assert!(discovered["capabilities"].get("experimental").is_none());
    let other = connected(&server).await;
    server.notify_clients("acme/reindexed", &json!({"documents": 42}));
    for client in [&client, &other] {
        let notice = client.next_message().await.unwrap();
        assert_eq!(notice["method"], "acme/reindexed");
        assert_eq!(notice["params"]["documents"], 42);
    }
}

#[test]
fn names_mcp_keeps_or_given_twice_are_refused_when_built() {
    async fn nothing(_ctx: Context, _p: serde_json::Value) -> Result<(), RpcError> {
        Ok(())
    }
    for name in [
        "tools/reindex",
        "notifications/acme",
        "initialize",
        "ping",
        "rpc.discover",
        "resources/directory/read",
        "",
    ] {
        let refused = mcp_runtime::server!()
            .auto_register(false)
            .method(name, nothing)
            .build()
            .unwrap_err();
        assert!(
            matches!(&refused, CatalogueError::ReservedMethod { name: n, .. } if n == name),
            "{name}: {refused:?}"
        );
        assert!(
            refused
                .to_string()
                .contains("name it in a namespace of your own"),
            "{refused}"
        );
    }
    let refused = mcp_runtime::server!()
        .auto_register(false)
        .method("acme/x", nothing)
        .on_notification("acme/x", |_: &Server, _: serde_json::Value| {})
        .build()
        .unwrap_err();
    assert!(
        refused.to_string().contains("it was given twice"),
        "{refused}"
    );
}

// ---------------------------------------------------------------------------------------
// The skills extension, from a folder

#[mcp_runtime::test]
async fn skills_from_a_folder_are_listed_fetched_browsed_and_read() {
    let scratch = mcp_tests::Scratch::new("skills");
    let root = scratch.path("skills");
    std::fs::create_dir_all(root.join("greeting/assets")).unwrap();
    std::fs::write(
        root.join("greeting/SKILL.md"),
        "---\nname: greeting\ndescription: Greet people warmly.\n---\nSay hello.\n",
    )
    .unwrap();
    std::fs::write(root.join("greeting/assets/wave.bin"), [0u8, 159, 146, 150]).unwrap();
    let server = mcp_runtime::server!()
        .auto_register(false)
        .skills(mcp_runtime::Skills::from_dir(&root).unwrap())
        .build()
        .unwrap();
    let client = connected(&server).await;
    let listed = client.request("skills/list", json!({})).await.unwrap();
    let entry = &listed["skills"][0];
    assert_eq!(entry["uri"], "skill://greeting/SKILL.md");
    assert_eq!(
        entry["frontmatter"],
        json!({"name": "greeting", "description": "Greet people warmly."})
    );
    assert_eq!(entry["resources"].as_array().unwrap().len(), 2);
    let got = client
        .request("skills/get", json!({"uri": "skill://greeting/SKILL.md"}))
        .await
        .unwrap();
    assert_eq!(&got["skill"], entry);
    let unknown = client
        .request("skills/get", json!({"uri": "skill://nobody/SKILL.md"}))
        .await
        .unwrap_err();
    assert_eq!(unknown.code, -32602);
    let folder = client
        .request(
            "resources/directory/read",
            json!({"uri": "skill://greeting"}),
        )
        .await
        .unwrap();
    assert_eq!(
        folder["resources"],
        json!([
            {"uri": "skill://greeting/SKILL.md", "name": "SKILL.md", "mimeType": "text/markdown", "size": 68},
            {"uri": "skill://greeting/assets", "name": "assets", "mimeType": "inode/directory"},
        ])
    );
    let binary = client
        .request(
            "resources/read",
            json!({"uri": "skill://greeting/assets/wave.bin"}),
        )
        .await
        .unwrap();
    assert_eq!(binary["contents"][0]["blob"], "AJ+Slg==");
    let listed = client.request("resources/list", json!({})).await.unwrap();
    assert_eq!(listed["resources"][0]["name"], "greeting");
    assert_eq!(
        listed["resources"][0]["description"],
        "Greet people warmly."
    );
    let init = server.connect_memory().initialize().await.unwrap();
    assert_eq!(
        init["capabilities"]["experimental"]["io.modelcontextprotocol/skills"],
        json!({"directoryRead": true})
    );
    // A skill hidden from a request (here by a layer) is not there for it at all.
    let hiding = mcp_runtime::server!()
        .auto_register(false)
        .skills(mcp_runtime::Skills::from_dir(&root).unwrap())
        .layer(from_fn(|mut request: McpRequest, next: Next| {
            request.hide_resource("skill://greeting/SKILL.md");
            next.run(request)
        }))
        .build()
        .unwrap();
    let hidden = connected(&hiding).await;
    let listed = hidden.request("skills/list", json!({})).await.unwrap();
    assert_eq!(listed["skills"], json!([]));
    let refused = hidden
        .request("skills/get", json!({"uri": "skill://greeting/SKILL.md"}))
        .await
        .unwrap_err();
    assert_eq!(refused.code, -32602);
    let refused = hidden
        .request(
            "resources/read",
            json!({"uri": "skill://greeting/SKILL.md"}),
        )
        .await
        .unwrap_err();
    assert_eq!(refused.code, -32002);
    let listed = hidden.request("resources/list", json!({})).await.unwrap();
    assert_eq!(listed["resources"], json!([]));
    // Hidden files are no part of a skill.
    std::fs::write(root.join("greeting/.env"), "SECRET=1").unwrap();
    let skills = mcp_runtime::Skills::from_dir(&root).unwrap();
    let server_with_dotfile = mcp_runtime::server!()
        .auto_register(false)
        .skills(skills)
        .build()
        .unwrap();
    let client_two = connected(&server_with_dotfile).await;
    let refused = client_two
        .request("resources/read", json!({"uri": "skill://greeting/.env"}))
        .await
        .unwrap_err();
    assert_eq!(refused.code, -32002);
    // A server without skills has none of the methods.
    let plain = connected(&builder(&Arc::default()).build().unwrap()).await;
    assert_eq!(
        plain
            .request("skills/list", json!({}))
            .await
            .unwrap_err()
            .code,
        -32601
    );
}
