//! Servers composed from other servers (`mcp_runtime::client::Mount`): the test catalogue
//! run as a child process and a server built in this process, mounted into one gateway,
//! which a client then uses in both eras: merged lists with pagination, calls, prompts,
//! reads and completions routed, progress and cancellation passed along, the mounted
//! server's requests answered by the gateway's client, its list changes and resource updates
//! followed, and name clashes refused when the gateway is built.

use std::time::Duration;

use mcp_runtime::client::{CallError, CancellationToken, Client, Era, Mount, RequestOptions};
use mcp_runtime::prelude::*;
use mcp_runtime::protocol::Root;
use mcp_runtime::serde_json::{Map, json};
use mcp_runtime::tokio;

/// Tomorrow's weather in a city.
#[tool]
fn forecast(
    /// The city.
    city: String,
) -> String {
    format!("sunny in {city}")
}

/// A greeting from the gateway itself.
#[tool]
fn hello() -> &'static str {
    "hello from the gateway"
}

fn weather() -> mcp_runtime::Server {
    mcp_runtime::server!()
        .auto_register(false)
        .tools(mcp_runtime::tools![forecast])
        .build()
        .unwrap()
}

async fn catalogue() -> Mount {
    let command = env!("CARGO_BIN_EXE_catalogue");
    Mount::connect("cat", command).await.unwrap()
}

async fn gateway() -> mcp_runtime::Server {
    mcp_runtime::server!()
        .auto_register(false)
        .page_size(5)
        .tools(mcp_runtime::tools![hello])
        .mount(catalogue().await)
        .mount(Mount::in_process("weather", &weather()).await.unwrap())
        .build()
        .unwrap()
}

/// A client of the gateway that answers sampling, elicitation and roots.
async fn caller(gateway: &mcp_runtime::Server, era: Era) -> Client {
    Client::builder()
        .era(era)
        .on_sampling(|_request| async move {
            Ok(json!({
                "role": "assistant",
                "content": { "type": "text", "text": "the caller's model says hi" },
                "model": "test-model",
            }))
        })
        .on_elicitation(|_request| async move {
            Ok(json!({ "action": "accept", "content": { "name": "Ada", "seat": "aisle", "bags": 1 } }))
        })
        .roots(vec![Root {
            uri: "file:///home/caller".into(),
            name: None,
        }])
        .in_process(gateway)
        .await
        .unwrap()
}

#[mcp_runtime::test]
async fn a_gateway_lists_and_routes_everything_of_its_mounted_servers_in_both_eras() {
    let gateway = gateway().await;
    for era in [Era::Handshake, Era::Auto] {
        let client = caller(&gateway, era).await;
        // Merged lists, read page by page.
        let first = client.list_tools(None).await.unwrap();
        assert_eq!(first.items.len(), 5);
        let tools = client.all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        for name in ["hello", "cat_fast", "cat_sleep", "weather_forecast"] {
            assert!(names.contains(&name), "{name} in {names:?}");
        }
        let forecast = tools.iter().find(|t| t.name == "weather_forecast").unwrap();
        assert_eq!(
            forecast.description.as_deref(),
            Some("Tomorrow's weather in a city.")
        );
        assert_eq!(
            forecast.input_schema["properties"]["city"]["type"],
            "string"
        );

        // Calls, to each server.
        let sunny = client
            .call_tool("weather_forecast", json!({ "city": "Oslo" }))
            .await
            .unwrap();
        assert_eq!(sunny.text(), "sunny in Oslo");
        assert_eq!(
            client
                .call_tool("cat_fast", json!({}))
                .await
                .unwrap()
                .text(),
            "fast"
        );
        assert_eq!(
            client.call_tool("hello", json!({})).await.unwrap().text(),
            "hello from the gateway"
        );
        let failed = client.call_tool("cat_fail", json!({})).await.unwrap();
        assert!(failed.is_error, "a mounted tool's error stays a tool error");
        let bad = client
            .call_tool("weather_forecast", json!({ "city": 7 }))
            .await
            .unwrap();
        assert!(bad.is_error && bad.text().contains("city"), "{bad:?}");

        // The mounted server's requests reach the gateway's client.
        let seat = client
            .call_tool("cat_choose_seat", json!({}))
            .await
            .unwrap();
        assert!(seat.text().contains("aisle"), "{seat:?}");
        let model = client
            .call_tool("cat_ask_model", json!({ "question": "hi?" }))
            .await
            .unwrap();
        assert!(
            model.text().contains("the caller's model says hi"),
            "{model:?}"
        );
        let roots = client.call_tool("cat_list_roots", json!({})).await.unwrap();
        assert_eq!(roots.text(), "file:///home/caller");

        // Prompts, reads and completions.
        let mut arguments = Map::new();
        arguments.insert("name".into(), "Ada".into());
        let greeting = client.get_prompt("cat_greeting", arguments).await.unwrap();
        assert!(
            greeting.messages[0]["content"]["text"]
                .as_str()
                .unwrap()
                .contains("Ada")
        );
        let numbers = client.read_resource("test://json-numbers").await.unwrap();
        assert_eq!(numbers.text(), "[1,2,3]");
        let item = client.read_resource("test://items/2/data").await.unwrap();
        assert!(item.text().contains("item 2"), "{item:?}");
        // The mounted server's own error comes through, code and all.
        match client.read_resource("test://items/9/data").await {
            Err(CallError::Rpc(error)) => {
                assert_ne!(error.code, -32603, "not an internal error: {error:?}");
                assert_eq!(error.data.unwrap_or_default()["uri"], "test://items/9/data");
            }
            other => panic!("an unknown item is an error: {other:?}"),
        }
        let languages = client
            .complete(
                json!({ "type": "ref/prompt", "name": "cat_code_review" }),
                "language",
                "r",
                None,
            )
            .await
            .unwrap();
        assert_eq!(languages.values, ["ruby", "rust"]);
        let ids = client
            .complete(
                json!({ "type": "ref/resource", "uri": "test://items/{id}/data" }),
                "id",
                "",
                None,
            )
            .await
            .unwrap();
        assert_eq!(ids.values, ["1", "2", "3"]);
        client.close().await;
    }
}

#[mcp_runtime::test]
async fn progress_comes_up_and_cancellation_goes_down_through_the_gateway() {
    let gateway = gateway().await;
    let client = caller(&gateway, Era::Handshake).await;
    let (sender, mut reports) = tokio::sync::mpsc::unbounded_channel();
    let options = RequestOptions::default().with_progress(sender);
    let done = client
        .call_tool_with("cat_progress", json!({}), &options)
        .await
        .unwrap();
    assert_eq!(done.text(), "done");
    drop(options);
    let mut steps = Vec::new();
    while let Some(report) = reports.recv().await {
        steps.push(report.progress);
    }
    assert_eq!(steps, [1.0, 2.0, 3.0]);

    // A call cancelled at the gateway is cancelled at the mounted server.
    let token = CancellationToken::new();
    let (sender, mut started) = tokio::sync::mpsc::unbounded_channel();
    let options = RequestOptions::default()
        .with_cancel(token.clone())
        .with_progress(sender);
    {
        let call = client.call_tool_with("cat_progress_then_hold", json!({}), &options);
        tokio::pin!(call);
        tokio::select! {
            outcome = &mut call => panic!("the call ended by itself: {outcome:?}"),
            _ = started.recv() => {}
        }
        token.cancel();
        assert!(matches!(call.await, Err(CallError::Cancelled)));
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let count = client
            .call_tool("cat_holds_cancelled", json!({}))
            .await
            .unwrap();
        if count.text() == "1" {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the mounted call was never cancelled"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    client.close().await;
}

#[mcp_runtime::test]
async fn the_gateway_follows_the_mounted_servers_changes() {
    let gateway = gateway().await;
    let client = caller(&gateway, Era::Handshake).await;
    let mut notifications = client.notifications();
    client.subscribe("test://watched").await.unwrap();
    client
        .call_tool("cat_touch_watched", json!({}))
        .await
        .unwrap();
    loop {
        let notification = notifications.next().await.unwrap();
        if notification.method == "notifications/resources/updated" {
            assert_eq!(notification.params["uri"], "test://watched");
            break;
        }
    }
    // What the gateway disabled stays disabled when the mounted lists change.
    assert!(gateway.disable_tool("cat_sleep"));
    client
        .call_tool(
            "cat_toggle_tool",
            json!({ "name": "fast", "enabled": false }),
        )
        .await
        .unwrap();
    loop {
        let notification = notifications.next().await.unwrap();
        if notification.method == "notifications/tools/list_changed"
            && !client
                .all_tools()
                .await
                .unwrap()
                .iter()
                .any(|t| t.name == "cat_fast")
        {
            break;
        }
    }
    let tools = client.all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "cat_slow_progress"));
    assert!(
        !tools.iter().any(|t| t.name == "cat_sleep"),
        "still disabled"
    );
    client.close().await;
}

#[mcp_runtime::test]
async fn a_name_taken_twice_is_refused_when_the_gateway_is_built() {
    let error = mcp_runtime::server!()
        .auto_register(false)
        .mount(Mount::in_process("weather", &weather()).await.unwrap())
        .mount(Mount::in_process("weather", &weather()).await.unwrap())
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("weather_forecast") && error.contains("the server mounted as `weather`"),
        "{error}"
    );
    match Mount::in_process("bad prefix", &weather()).await {
        Err(CallError::Usage(message)) => assert!(message.contains("prefix"), "{message}"),
        other => panic!("{other:?}"),
    }
}

/// A server written by hand, as any other program could be: one prompt, whose argument it
/// completes with ten thousand values.
const GENEROUS_SERVER: &str = r#"
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method, result = message["method"], {}
    if method == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"],
                  "capabilities": {"prompts": {}, "completions": {}},
                  "serverInfo": {"name": "generous", "version": "1"}}
    elif method == "prompts/list":
        result = {"prompts": [{"name": "pick", "arguments": [{"name": "word"}]}]}
    elif method == "completion/complete":
        result = {"completion": {"values": [f"w{n}" for n in range(10000)], "hasMore": False}}
    elif method.endswith("/list"):
        result = {method.split("/")[0]: []}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"#;

#[mcp_runtime::test]
async fn a_mounted_servers_completions_are_held_to_a_hundred_values() {
    let scratch = mcp_tests::Scratch::new("generous");
    let script = scratch.path("generous.py");
    std::fs::write(&script, GENEROUS_SERVER).unwrap();
    let mount = Mount::connect("up", &format!("python3 {}", script.display()))
        .await
        .unwrap();
    let gateway = mcp_runtime::server!()
        .auto_register(false)
        .mount(mount)
        .build()
        .unwrap();
    let client = caller(&gateway, Era::Handshake).await;
    let words = client
        .complete(
            json!({ "type": "ref/prompt", "name": "up_pick" }),
            "word",
            "",
            None,
        )
        .await
        .unwrap();
    assert_eq!(words.values.len(), 100);
    assert_eq!(words.values[99], "w99");
    assert!(words.has_more);
    client.close().await;
}
