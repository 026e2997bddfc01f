//! The client (`mcp_runtime::client`) against real servers through real transports: the
//! test catalogue as a child process over stdio and over Streamable HTTP in both eras, the
//! legacy HTTP+SSE transport, and what a caller relies on: pagination, progress,
//! notifications, timeouts and cancellation, the server's requests answered by handlers,
//! and the 2026-07-28 round trips.

use std::time::Duration;

use mcp_runtime::client::{CallError, CancellationToken, Client, Era, Mount, RequestOptions};
use mcp_runtime::protocol::{LogLevel, Root};
use mcp_runtime::serde_json::{Map, Value, json};
use mcp_runtime::tokio;
use mcp_tests::http::HttpServer;

fn catalogue() -> tokio::process::Command {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_catalogue"))
}

fn catalogue_with(env: &[(&str, &str)]) -> tokio::process::Command {
    let mut command = catalogue();
    command.envs(env.iter().copied());
    command
}

/// The hostile server (tests/servers/hostile_server.py) in `mode`, over stdio: a real
/// server until its scenario has it misbehave.
fn hostile(mode: &str, env: &[(&str, &str)]) -> tokio::process::Command {
    let python = std::env::var("MCP_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let mut command = tokio::process::Command::new(python);
    command
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/servers/hostile_server.py"
        ))
        .arg(mode)
        .envs(env.iter().copied());
    command
}

/// The hostile server in `mode` (with `env`), mounted as `prefix`.
async fn hostile_mount(prefix: &str, mode: &str, env: &[(&str, &str)]) -> Mount {
    let mounted = Client::builder()
        .proxy()
        .stdio(hostile(mode, env))
        .await
        .unwrap();
    Mount::new(prefix, mounted).await.unwrap()
}

/// A gateway serving `mounts`, and a client of it in the handshake era; the gateway lives as
/// long as it is kept.
async fn gateway_of(mounts: Vec<Mount>) -> (mcp_runtime::Server, Client) {
    let gateway = mounts
        .into_iter()
        .fold(
            mcp_runtime::server!().auto_register(false),
            |builder, mount| builder.mount(mount),
        )
        .build()
        .unwrap();
    let caller = Client::builder()
        .era(Era::Handshake)
        .in_process(&gateway)
        .await
        .unwrap();
    (gateway, caller)
}

/// A gateway serving the hostile server in `mode` (with `env`) mounted as `prefix`, and a
/// client of it (see [`gateway_of`]).
async fn gateway_over(
    prefix: &str,
    mode: &str,
    env: &[(&str, &str)],
) -> (mcp_runtime::Server, Client) {
    gateway_of(vec![hostile_mount(prefix, mode, env).await]).await
}

/// A client answering the catalogue's sampling, elicitation and roots requests.
fn answering() -> mcp_runtime::client::ClientBuilder {
    Client::builder()
        .name("client-tests", "1.0.0")
        .on_sampling(|request| async move {
            let question = request["messages"][0]["content"]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            Ok(json!({
                "role": "assistant",
                "content": { "type": "text", "text": format!("an answer to {question}") },
                "model": "test-model",
            }))
        })
        .on_elicitation(|_request| async move {
            Ok(json!({ "action": "accept", "content": { "name": "Ada", "seat": "window", "bags": 2 } }))
        })
        .roots(vec![Root {
            uri: "file:///home/ada/project".into(),
            name: Some("project".into()),
        }])
}

async fn every_method(client: &Client) {
    // Pages of two, followed to the end.
    let page = client.list_tools(None).await.unwrap();
    assert_eq!(page.items.len(), 2);
    assert!(page.next_cursor.is_some());
    let tools = client.all_tools().await.unwrap();
    assert!(tools.len() > 20, "{}", tools.len());
    let sleep = tools.iter().find(|t| t.name == "sleep").unwrap();
    assert_eq!(sleep.input_schema["properties"]["ms"]["type"], "integer");

    let fast = client.call_tool("fast", json!({})).await.unwrap();
    assert_eq!(fast.text(), "fast");
    assert!(!fast.is_error);
    let failed = client.call_tool("fail", json!({})).await.unwrap();
    assert!(failed.is_error, "a tool error is a result: {failed:?}");
    match client.call_tool("no_such_tool", json!({})).await {
        Err(CallError::Rpc(error)) => assert_eq!(error.code, -32602, "{error:?}"),
        other => panic!("an unknown tool is a protocol error: {other:?}"),
    }

    let prompts = client.all_prompts().await.unwrap();
    assert!(prompts.iter().any(|p| p.name == "code_review"));
    let mut arguments = Map::new();
    arguments.insert("name".into(), "Ada".into());
    let greeting = client.get_prompt("greeting", arguments).await.unwrap();
    assert!(
        greeting.messages[0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("Ada"),
        "{greeting:?}"
    );

    let resources = client.all_resources().await.unwrap();
    assert!(resources.iter().any(|r| r.uri == "test://static-text"));
    let templates = client.all_resource_templates().await.unwrap();
    assert!(
        templates
            .iter()
            .any(|t| t.uri_template == "test://items/{id}/data")
    );
    let numbers = client.read_resource("test://json-numbers").await.unwrap();
    assert_eq!(numbers.text(), "[1,2,3]");

    let completion = client
        .complete(
            json!({ "type": "ref/prompt", "name": "code_review" }),
            "language",
            "r",
            None,
        )
        .await
        .unwrap();
    assert_eq!(completion.values, ["ruby", "rust"]);
    client.ping().await.unwrap();
}

#[mcp_runtime::test]
async fn over_stdio_in_both_eras_every_server_method_has_a_typed_call() {
    for (era, stateless) in [(Era::Handshake, false), (Era::Auto, true)] {
        let client = Client::builder()
            .era(era)
            .stdio(catalogue_with(&[("PAGE_SIZE", "2")]))
            .await
            .unwrap();
        assert_eq!(client.server().stateless, stateless);
        assert_eq!(
            client.server().protocol_version,
            if stateless {
                "2026-07-28"
            } else {
                "2025-11-25"
            }
        );
        assert_eq!(client.server().server_info.name, "mcp-tests");
        every_method(&client).await;
        client.close().await;
    }
}

#[mcp_runtime::test]
async fn over_http_in_both_eras_every_server_method_has_a_typed_call() {
    let server = HttpServer::spawn(
        env!("CARGO_BIN_EXE_catalogue").as_ref(),
        &[("PAGE_SIZE", "2")],
    );
    for (era, stateless) in [(Era::Handshake, false), (Era::Auto, true)] {
        let client = Client::builder()
            .era(era)
            .http(&server.url("/mcp"))
            .await
            .unwrap();
        assert_eq!(client.server().stateless, stateless);
        every_method(&client).await;
        client.close().await;
    }
}

#[mcp_runtime::test]
async fn the_legacy_http_sse_transport_is_the_fallback_for_a_2024_11_05_endpoint() {
    let server = HttpServer::spawn(env!("CARGO_BIN_EXE_catalogue").as_ref(), &[]);
    let client = Client::builder()
        .era(Era::Handshake)
        .protocol_version(mcp_runtime::protocol::ProtocolVersion::V2024_11_05)
        .http(&server.url("/sse"))
        .await
        .unwrap();
    assert_eq!(client.server().protocol_version, "2024-11-05");
    assert_eq!(
        client.call_tool("fast", json!({})).await.unwrap().text(),
        "fast"
    );
    let progress = progress_of(&client, "progress").await;
    assert_eq!(progress.len(), 3);
    client.close().await;
}

/// Connects with a token to the hostile server's legacy stream naming `endpoint` (`{port}`:
/// the stream's port, `{other}`: another port it listens on) and expects a refusal, with
/// nothing sent to either port's `/messages` nor in TLS.
async fn legacy_endpoint_is_refused(endpoint: &str) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/servers/hostile_server.py");
    let server = HttpServer::spawn_with_args(
        script.as_ref(),
        &["legacy_elsewhere".as_ref()],
        &[("ENDPOINT", endpoint)],
    );
    let connected = Client::builder()
        .era(Era::Handshake)
        .bearer("secret-token")
        .timeout(Duration::from_secs(5))
        .http(&server.url("/sse"))
        .await;
    let Err(refused) = connected else {
        panic!("the client took the endpoint {endpoint} of a stream on another origin");
    };
    assert!(
        matches!(&refused, CallError::Protocol(problem) if problem.contains("another origin")),
        "{refused:?}"
    );
    let sent = server.request("GET", "/elsewhere").send().json();
    assert_eq!(sent["elsewhere"], json!([]), "sent to another origin");
}

#[mcp_runtime::test]
async fn a_legacy_endpoint_on_another_port_is_refused_and_sent_nothing() {
    legacy_endpoint_is_refused("http://127.0.0.1:{other}/messages?sessionId=1").await;
}

#[mcp_runtime::test]
async fn a_legacy_endpoint_on_another_scheme_of_the_same_host_and_port_is_refused() {
    // The authority is the stream's own; only the scheme tells the origins apart.
    legacy_endpoint_is_refused("https://127.0.0.1:{port}/messages?sessionId=1").await;
}

async fn progress_of(client: &Client, tool: &str) -> Vec<mcp_runtime::client::Progress> {
    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
    let options = RequestOptions::default().with_progress(sender);
    let result = client
        .call_tool_with(tool, json!({}), &options)
        .await
        .unwrap();
    assert!(!result.is_error, "{result:?}");
    drop(options);
    let mut reports = Vec::new();
    while let Some(report) = receiver.recv().await {
        reports.push(report);
    }
    reports
}

#[mcp_runtime::test]
async fn progress_reaches_the_caller_and_a_broken_answer_stream_is_resumed() {
    let server = HttpServer::spawn(env!("CARGO_BIN_EXE_catalogue").as_ref(), &[]);
    let client = Client::builder()
        .era(Era::Handshake)
        .http(&server.url("/mcp"))
        .await
        .unwrap();
    let reports = progress_of(&client, "progress").await;
    let steps: Vec<f64> = reports.iter().map(|r| r.progress).collect();
    assert_eq!(steps, [1.0, 2.0, 3.0]);
    assert_eq!(reports[0].message.as_deref(), Some("step 1"));
    // The server closes the answer stream after the first report; the client resumes it
    // with `Last-Event-ID` and gets the rest and the answer.
    let reports = progress_of(&client, "close_stream_midway").await;
    let steps: Vec<f64> = reports.iter().map(|r| r.progress).collect();
    assert_eq!(steps, [1.0, 2.0, 3.0]);
    client.close().await;
}

#[mcp_runtime::test]
async fn a_timeout_or_a_cancellation_tells_the_server_and_the_connection_goes_on() {
    for era in [Era::Handshake, Era::Auto] {
        cancellations_reach_the_server(era).await;
    }
}

async fn cancellations_reach_the_server(era: Era) {
    let client = Client::builder().era(era).stdio(catalogue()).await.unwrap();
    let options = RequestOptions::timeout(Duration::from_millis(200));
    match client.call_tool_with("hold", json!({}), &options).await {
        Err(CallError::Timeout { method }) => assert_eq!(method, "tools/call"),
        other => panic!("expected a timeout: {other:?}"),
    }
    wait_for_ended_holds(&client, 1).await;

    // Cancelled through a token, once the server reported it holds the call.
    let token = CancellationToken::new();
    let (sender, mut started) = tokio::sync::mpsc::unbounded_channel();
    let options = RequestOptions::default()
        .with_cancel(token.clone())
        .with_progress(sender);
    {
        let call = client.call_tool_with("progress_then_hold", json!({}), &options);
        tokio::pin!(call);
        tokio::select! {
            outcome = &mut call => panic!("the call ended by itself: {outcome:?}"),
            _ = started.recv() => {}
        }
        token.cancel();
        assert!(matches!(call.await, Err(CallError::Cancelled)));
    }
    wait_for_ended_holds(&client, 2).await;

    // A call whose future is dropped is cancelled too.
    let (sender, mut started) = tokio::sync::mpsc::unbounded_channel();
    let options = RequestOptions::default().with_progress(sender);
    {
        let call = client.call_tool_with("progress_then_hold", json!({}), &options);
        tokio::pin!(call);
        tokio::select! {
            outcome = &mut call => panic!("the call ended by itself: {outcome:?}"),
            _ = started.recv() => {}
        }
    }
    wait_for_ended_holds(&client, 3).await;
    assert_eq!(
        client.call_tool("fast", json!({})).await.unwrap().text(),
        "fast"
    );
    client.close().await;
}

/// Tries `attempt` every 20 ms until it succeeds, and returns what it found; fails the test
/// with the last attempt's reason after `within`.
async fn eventually<T, F>(within: Duration, mut attempt: impl FnMut() -> F) -> T
where
    F: std::future::Future<Output = Result<T, String>>,
{
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match attempt().await {
            Ok(found) => return found,
            Err(why) => assert!(tokio::time::Instant::now() < deadline, "{why}"),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until the server counts `ended` held calls ended (by their cancellation).
async fn wait_for_ended_holds(client: &Client, ended: u32) {
    eventually(Duration::from_secs(20), || async {
        let count = client
            .call_tool("holds_cancelled", json!({}))
            .await
            .unwrap();
        (count.text().parse::<u32>().unwrap() >= ended)
            .then_some(())
            .ok_or_else(|| format!("the server never counted {ended} cancelled calls"))
    })
    .await;
}

#[mcp_runtime::test]
async fn the_servers_requests_are_answered_by_the_handlers_in_both_eras() {
    let server = HttpServer::spawn(env!("CARGO_BIN_EXE_catalogue").as_ref(), &[]);
    for era in [Era::Handshake, Era::Auto] {
        let client = answering()
            .era(era)
            .http(&server.url("/mcp"))
            .await
            .unwrap();
        let answer = client
            .call_tool("ask_model", json!({ "question": "why?" }))
            .await
            .unwrap();
        assert!(answer.text().contains("an answer to why?"), "{answer:?}");
        let seat = client.call_tool("choose_seat", json!({})).await.unwrap();
        assert!(seat.text().contains("window"), "{seat:?}");
        let roots = client.call_tool("list_roots", json!({})).await.unwrap();
        assert_eq!(roots.text(), "file:///home/ada/project");
        client.close().await;
    }
    // Over stdio as well.
    let client = answering()
        .era(Era::Handshake)
        .stdio(catalogue())
        .await
        .unwrap();
    let seat = client.call_tool("choose_seat", json!({})).await.unwrap();
    assert!(seat.text().contains("window"), "{seat:?}");
    client.close().await;
}

#[mcp_runtime::test]
async fn notifications_arrive_as_a_stream() {
    let client = Client::builder()
        .era(Era::Handshake)
        .stdio(catalogue())
        .await
        .unwrap();
    let mut notifications = client.notifications();
    client.set_level(LogLevel::Info).await.unwrap();
    client.call_tool("log", json!({})).await.unwrap();
    let mut logged = Vec::new();
    while logged.len() < 2 {
        let notification = notifications.next().await.unwrap();
        if notification.method == "notifications/message" {
            logged.push(notification.params["level"].as_str().unwrap().to_owned());
        }
    }
    assert_eq!(logged, ["info", "error"], "debug is below the level set");
    client
        .call_tool("toggle_tool", json!({ "name": "fast", "enabled": false }))
        .await
        .unwrap();
    loop {
        let notification = notifications.next().await.unwrap();
        if notification.method == "notifications/tools/list_changed" {
            break;
        }
    }
    assert!(
        !client
            .all_tools()
            .await
            .unwrap()
            .iter()
            .any(|t| t.name == "fast")
    );
    client.close().await;
}

#[mcp_runtime::test]
async fn a_stateless_call_carries_the_standard_and_mirrored_headers() {
    let server = HttpServer::spawn(env!("CARGO_BIN_EXE_catalogue").as_ref(), &[]);
    let client = Client::http(&server.url("/mcp")).await.unwrap();
    assert!(client.server().stateless);
    // The server refuses a call whose mirrored arguments lack their headers; the client
    // learns them from the listing.
    client.all_tools().await.unwrap();
    let routed = client
        .call_tool(
            "route",
            json!({ "region": "eu-west-1", "shard": 3, "query": "x" }),
        )
        .await
        .unwrap();
    assert!(!routed.is_error, "{routed:?}");
    // A task method names its task in `Mcp-Name`: the server finds no task, and says so.
    match client.get_task("no-such-task").await {
        Err(CallError::Rpc(error)) => {
            assert_ne!(error.code, -32020, "no header mismatch: {error:?}");
        }
        other => panic!("an unknown task is an error: {other:?}"),
    }
    client.close().await;
}

#[mcp_runtime::test]
async fn a_child_that_exits_fails_the_calls_in_flight_and_the_next_ones() {
    let client = Client::builder()
        .era(Era::Handshake)
        .stdio(catalogue())
        .await
        .unwrap();
    let held = {
        let client = client.clone();
        tokio::spawn(async move { client.call_tool("hold", json!({})).await })
    };
    client.ping().await.unwrap();
    // Closing ends the child's input: the child exits, and the held call fails.
    let other = client.clone();
    client.close().await;
    assert!(matches!(held.await.unwrap(), Err(CallError::Closed(_))));
    assert!(matches!(other.ping().await, Err(CallError::Closed(_))));
}

#[mcp_runtime::test]
async fn a_target_is_a_url_or_a_command_line() {
    let command = format!("{} --name-ignored", env!("CARGO_BIN_EXE_catalogue"));
    let client = Client::builder()
        .era(Era::Handshake)
        .connect(&command)
        .await;
    // The catalogue ignores arguments it does not know.
    let client = client.unwrap();
    assert_eq!(
        client.call_tool("fast", json!({})).await.unwrap().text(),
        "fast"
    );
    client.close().await;
    match Client::http("ftp://example.com").await {
        Err(CallError::Usage(message)) => assert!(message.contains("http"), "{message}"),
        other => panic!("{other:?}"),
    }
    match Client::builder().connect("/no/such/program").await {
        Err(CallError::Transport(message)) => {
            assert!(message.contains("could not start"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[mcp_runtime::test]
async fn in_the_stateless_era_notifications_come_to_a_listener() {
    let server = HttpServer::spawn(env!("CARGO_BIN_EXE_catalogue").as_ref(), &[]);
    let client = Client::http(&server.url("/mcp")).await.unwrap();
    assert!(client.server().stateless);
    let mut notifications = client.notifications();
    let listening = client
        .listen(json!({ "toolsListChanged": true, "resourceSubscriptions": ["test://watched"] }))
        .await
        .unwrap();
    assert_eq!(
        listening.acknowledged()["notifications"]["toolsListChanged"],
        true
    );
    client.call_tool("touch_watched", json!({})).await.unwrap();
    client
        .call_tool("toggle_tool", json!({ "name": "fast", "enabled": false }))
        .await
        .unwrap();
    let mut heard = Vec::new();
    while heard.len() < 2 {
        let notification = notifications.next().await.unwrap();
        if notification.method != "notifications/subscriptions/acknowledged" {
            heard.push(notification.method);
        }
    }
    heard.sort();
    assert_eq!(
        heard,
        [
            "notifications/resources/updated",
            "notifications/tools/list_changed"
        ]
    );
    drop(listening);
    client.close().await;
}

#[mcp_runtime::test]
async fn a_bearer_token_and_the_given_headers_go_with_every_http_request() {
    let server = HttpServer::spawn(
        env!("CARGO_BIN_EXE_caller").as_ref(),
        &[("HTTP_AUTH_TOKENS", "secret-token:ada")],
    );
    match Client::http(&server.url("/mcp")).await {
        Err(CallError::Http { status, .. }) => assert_eq!(status, 401),
        other => panic!("without the token the server refuses: {other:?}"),
    }
    for era in [Era::Handshake, Era::Auto] {
        let client = Client::builder()
            .era(era)
            .bearer("secret-token")
            .header("X-Probe", "from-the-client")
            .http(&server.url("/mcp"))
            .await
            .unwrap();
        let who = client.call_tool("whoami", json!({})).await.unwrap();
        let who: Value = who.structured_content.unwrap();
        assert_eq!(who["result"]["subject"], "ada", "{who}");
        assert_eq!(who["result"]["probe"], "from-the-client", "{who}");
        client.close().await;
    }
}

#[mcp_runtime::test]
async fn changed_roots_are_what_the_server_gets_next() {
    let client = answering()
        .era(Era::Handshake)
        .stdio(catalogue())
        .await
        .unwrap();
    let roots = client.call_tool("list_roots", json!({})).await.unwrap();
    assert_eq!(roots.text(), "file:///home/ada/project");
    client
        .set_roots(vec![Root {
            uri: "file:///srv/elsewhere".into(),
            name: None,
        }])
        .await
        .unwrap();
    let roots = client.call_tool("list_roots", json!({})).await.unwrap();
    assert_eq!(roots.text(), "file:///srv/elsewhere");
    client.close().await;
}

/// Waits until `client` lists the resource template `template`.
async fn wait_for_template(client: &Client, template: &str) {
    eventually(Duration::from_secs(20), || async {
        let templates = client.all_resource_templates().await.unwrap();
        templates
            .iter()
            .any(|t| t.uri_template == template)
            .then_some(())
            .ok_or_else(|| format!("the gateway never listed {template}"))
    })
    .await;
}

#[mcp_runtime::test]
async fn a_mount_never_removes_or_takes_over_another_mounts_resources() {
    let victim = Mount::connect("cat", env!("CARGO_BIN_EXE_catalogue"))
        .await
        .unwrap();
    let hijacker = hostile_mount(
        "evil",
        "hijack",
        &[
            ("VICTIM_RESOURCE", "test://static-text"),
            ("VICTIM_TEMPLATE", "test://items/{id}/data"),
        ],
    )
    .await;
    let (_gateway, caller) = gateway_of(vec![victim, hijacker]).await;
    // The hostile server lists the catalogue's URIs (left out), drops them (nothing of its
    // own to remove), then lists them again (still the catalogue's); its template names
    // each generation once the gateway followed it.
    for generation in 1..=3 {
        caller.call_tool("evil_next", json!({})).await.unwrap();
        wait_for_template(&caller, &format!("hostile://gen{generation}/{{rest}}")).await;
        let listed = caller.all_resources().await.unwrap();
        assert!(
            listed.iter().any(|r| r.uri == "test://static-text"),
            "generation {generation}: the catalogue's resource is gone"
        );
        match caller.read_resource("test://static-text").await {
            Ok(read) => assert_ne!(read.text(), "taken over", "generation {generation}"),
            Err(error) => panic!("generation {generation}: the catalogue's resource: {error}"),
        }
        match caller.read_resource("test://items/1/data").await {
            Ok(read) => assert!(
                read.text().contains("item 1"),
                "generation {generation}: {read:?}"
            ),
            Err(error) => panic!("generation {generation}: the catalogue's template: {error}"),
        }
    }
    // Its updates of the catalogue's resource are not passed on; those of its own are.
    let mut notifications = caller.notifications();
    caller.subscribe("test://static-text").await.unwrap();
    caller.subscribe("hostile://own").await.unwrap();
    caller.call_tool("evil_touch", json!({})).await.unwrap();
    let updated = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let notification = notifications.next().await.unwrap();
            if notification.method == "notifications/resources/updated" {
                return notification.params["uri"].clone();
            }
        }
    })
    .await
    .expect("no resource update reached the caller");
    assert_eq!(updated, "hostile://own");
    caller.close().await;
}

#[mcp_runtime::test]
async fn an_answer_stream_the_server_leaves_open_is_closed_once_the_answer_came() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/servers/hostile_server.py");
    let server = HttpServer::spawn_with_args(script.as_ref(), &["linger".as_ref()], &[]);
    let client = Client::builder()
        .era(Era::Handshake)
        .http(&server.url("/mcp"))
        .await
        .unwrap();
    for _ in 0..3 {
        let answered = client.call_tool("answer", json!({})).await.unwrap();
        assert_eq!(answered.text(), "answered");
    }
    eventually(Duration::from_secs(20), || async {
        let open = server.request("GET", "/open").send().json()["open"].clone();
        (open == 0)
            .then_some(())
            .ok_or_else(|| format!("the client still holds {open} answer streams open"))
    })
    .await;
    client.close().await;
}

#[mcp_runtime::test]
async fn pages_without_end_fail_the_listing_naming_it() {
    let client = Client::builder()
        .era(Era::Handshake)
        .stdio(hostile("endless_pages", &[]))
        .await
        .unwrap();
    let listing = tokio::time::timeout(Duration::from_secs(60), client.all_tools())
        .await
        .expect("the client follows the pages for ever");
    match listing {
        Err(CallError::Protocol(message)) => {
            assert!(message.contains("`tools/list`"), "{message}");
            assert!(message.contains("10000 pages"), "{message}");
        }
        other => panic!("endless pages are a protocol error: {other:?}"),
    }
    client.close().await;
}

#[mcp_runtime::test]
async fn a_listen_never_acknowledged_fails_after_the_clients_timeout_and_a_mount_still_starts() {
    let quiet = || {
        Client::builder()
            .proxy()
            .timeout(Duration::from_millis(500))
            .stdio(hostile("no_acknowledge", &[]))
    };
    let within = Duration::from_secs(20);
    let client = quiet().await.unwrap();
    assert!(client.server().stateless);
    let listening =
        tokio::time::timeout(within, client.listen(json!({ "toolsListChanged": true })))
            .await
            .expect("the client waits for the acknowledgement for ever");
    match listening {
        Err(CallError::Timeout { method }) => assert_eq!(method, "subscriptions/listen"),
        other => panic!("an acknowledgement that never comes is a timeout: {other:?}"),
    }
    client.close().await;

    let mount = tokio::time::timeout(within, async { Mount::new("quiet", quiet().await?).await })
        .await
        .expect("the mount waits for the acknowledgement for ever")
        .unwrap();
    let gateway = mcp_runtime::server!()
        .auto_register(false)
        .mount(mount)
        .build()
        .unwrap();
    let caller = Client::builder().in_process(&gateway).await.unwrap();
    let answered = caller.call_tool("quiet_answer", json!({})).await.unwrap();
    assert_eq!(answered.text(), "answered");
    caller.close().await;
}

#[mcp_runtime::test]
async fn a_flood_of_server_requests_is_answered_at_most_64_at_once_and_the_rest_refused() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    const FLOOD: usize = 200;
    let handled = Arc::new(AtomicUsize::new(0));
    let counted = handled.clone();
    let client = Client::builder()
        .era(Era::Handshake)
        // Each request of the server is held for as long as the client lives.
        .on_sampling(move |_request| {
            counted.fetch_add(1, Ordering::SeqCst);
            std::future::pending()
        })
        .stdio(hostile("request_flood", &[("FLOOD", &FLOOD.to_string())]))
        .await
        .unwrap();
    client.call_tool("flood", json!({})).await.unwrap();
    let handled = eventually(Duration::from_secs(20), || async {
        let refused: usize = client
            .call_tool("refused", json!({}))
            .await
            .unwrap()
            .text()
            .parse()
            .unwrap();
        let handled = handled.load(Ordering::SeqCst);
        (refused + handled == FLOOD)
            .then_some(handled)
            .ok_or_else(|| {
                format!("of {FLOOD} requests, {handled} are answered and {refused} refused")
            })
    })
    .await;
    assert_eq!(handled, mcp_runtime::client::MAX_SERVER_REQUESTS);
    // The client's own requests go on.
    client.ping().await.unwrap();
    client.close().await;
}

#[mcp_runtime::test]
async fn a_server_that_stops_reading_its_input_cannot_hold_the_client_or_its_closing() {
    let client = Client::builder()
        .era(Era::Handshake)
        .stdio(hostile("stall", &[]))
        .await
        .unwrap();
    // The server's pings are answered until its input is full; its answer still comes.
    let stalled = client.call_tool("stall", json!({})).await.unwrap();
    assert_eq!(stalled.text(), "stalled");
    tokio::time::timeout(Duration::from_secs(20), client.close())
        .await
        .expect("closing waits for the server to read its input");
}

/// Waits until `client` lists the tool `name`, and returns every tool it lists then.
async fn wait_for_tool(client: &Client, name: &str) -> Vec<mcp_runtime::client::ToolInfo> {
    eventually(Duration::from_secs(30), || async {
        let tools = client.all_tools().await.unwrap();
        if tools.iter().any(|t| t.name == name) {
            Ok(tools)
        } else {
            Err(format!("the gateway never listed {name}"))
        }
    })
    .await
}

#[mcp_runtime::test]
async fn a_mount_changing_a_large_description_without_end_is_held_to_a_bound_keeping_the_last_version()
 {
    // Each version of a mounted tool is kept for the life of the process; a server that
    // changes a 1 MiB description on every bump stops being followed once the mount's text
    // reaches 16 MiB, and the gateway goes on serving the version it took last.
    const BUMPS: usize = 30;
    let (_gateway, caller) = gateway_over(
        "describer",
        "describe",
        &[("DESCRIPTION_BYTES", &(1024 * 1024).to_string())],
    )
    .await;
    let version = |tools: &[mcp_runtime::client::ToolInfo]| -> usize {
        let Some(described) = tools.iter().find(|t| t.name == "describer_described") else {
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
            panic!("the gateway serves no version of the tool: {names:?}");
        };
        let description = described.description.as_deref().unwrap_or_default();
        description.split(' ').nth(1).unwrap().parse().unwrap()
    };
    let mut served = vec![version(&caller.all_tools().await.unwrap())];
    for generation in 1..=BUMPS {
        caller.call_tool("describer_bump", json!({})).await.unwrap();
        // Followed once the new marker is listed; the description is that version's, or
        // the last one taken.
        let tools = wait_for_tool(&caller, &format!("describer_marker{generation}")).await;
        served.push(version(&tools));
    }
    let taken = served.windows(2).filter(|w| w[0] != w[1]).count() + 1;
    // Each 1 MiB version is counted as 2 MiB (its text and its key).
    assert!(
        taken <= 16 / 2,
        "the gateway took {taken} versions of a 1 MiB description: {served:?}"
    );
    let last = *served.last().unwrap();
    assert!(last < BUMPS, "{served:?}");
    assert!(
        served.ends_with(&[last; 10]),
        "the version served once changes are refused stays: {served:?}"
    );
    let answered = caller
        .call_tool("describer_described", json!({}))
        .await
        .unwrap();
    assert_eq!(answered.text(), "answered");
    caller.close().await;
}

#[mcp_runtime::test]
async fn progress_past_a_bounded_senders_capacity_is_dropped_not_held() {
    let client = Client::builder()
        .era(Era::Handshake)
        .stdio(hostile("progress_flood", &[("PROGRESS", "100000")]))
        .await
        .unwrap();
    // Nothing reads the reports while the server sends a hundred thousand of them.
    let (sender, mut reports) = tokio::sync::mpsc::channel(8);
    let options = RequestOptions::default().with_progress(sender);
    let done = tokio::time::timeout(
        Duration::from_secs(60),
        client.call_tool_with("progress", json!({}), &options),
    )
    .await
    .expect("the flood holds the call")
    .unwrap();
    assert_eq!(done.text(), "done");
    let mut held = Vec::new();
    while let Ok(report) = reports.try_recv() {
        held.push(report.progress);
    }
    assert_eq!(held, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]);
    client.close().await;
}

#[mcp_runtime::test]
async fn a_mounted_call_flooded_with_progress_is_answered_and_its_progress_passed_on() {
    let (_gateway, caller) =
        gateway_over("flooder", "progress_flood", &[("PROGRESS", "100000")]).await;
    let (sender, mut reports) = tokio::sync::mpsc::unbounded_channel();
    let options = RequestOptions::default().with_progress(sender);
    let done = tokio::time::timeout(
        Duration::from_secs(60),
        caller.call_tool_with("flooder_progress", json!({}), &options),
    )
    .await
    .expect("the flood holds the mounted call")
    .unwrap();
    assert_eq!(done.text(), "done");
    let first = reports.try_recv().expect("no progress was passed on");
    assert_eq!(first.progress, 0.0);
    caller.close().await;
}

#[mcp_runtime::test]
async fn a_stream_asking_to_be_resumed_at_once_is_resumed_after_a_wait_that_doubles() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/servers/hostile_server.py");
    let server = HttpServer::spawn_with_args(script.as_ref(), &["retry0".as_ref()], &[]);
    let client = Client::builder()
        .era(Era::Handshake)
        .http(&server.url("/mcp"))
        .await
        .unwrap();
    // Its GET stream asks for `retry: 0`, carries one event and ends, each time.
    let gets = eventually(Duration::from_secs(20), || async {
        let gets: Vec<f64> = mcp_runtime::serde_json::from_value(
            server.request("GET", "/gets").send().json()["gets"].clone(),
        )
        .unwrap();
        if gets.len() >= 4 {
            Ok(gets)
        } else {
            Err(format!(
                "the client resumed its stream {} times",
                gets.len()
            ))
        }
    })
    .await;
    // At least 100 ms, then 200 ms, then 400 ms between them.
    let waited = gets[3] - gets[0];
    assert!(
        waited >= 0.69,
        "four GETs in {waited:.3} s: the client resumes at the server's `retry: 0`"
    );
    client.close().await;
}

#[mcp_runtime::test]
async fn a_mounted_name_that_is_not_a_valid_tool_name_is_left_out() {
    let long = "x".repeat(100_000);
    // `odd_` and 124 characters are 128 in all, the most a tool name may have.
    let (longest, too_long) = ("y".repeat(124), "z".repeat(125));
    let names = json!([
        "",
        "a b",
        "nul\u{0}byte",
        "new\nline",
        "é",
        long,
        too_long,
        longest,
        "fine-name.v2"
    ]);
    let (_gateway, caller) =
        gateway_over("odd", "odd_names", &[("NAMES", &names.to_string())]).await;
    let valid = |name: &str| {
        (1..=128).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
    };
    // Names cut for the messages: one of them has 100,000 characters.
    let cut = |names: &[String]| -> Vec<String> {
        names.iter().map(|n| n.chars().take(40).collect()).collect()
    };
    let tools: Vec<String> = caller
        .all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(tools.iter().all(|n| valid(n)), "{:?}", cut(&tools));
    assert!(
        tools.iter().any(|n| n == "odd_fine-name.v2"),
        "{:?}",
        cut(&tools)
    );
    assert!(
        tools.contains(&format!("odd_{longest}")),
        "{:?}",
        cut(&tools)
    );
    assert!(tools.iter().any(|n| n == "odd_answer"), "{:?}", cut(&tools));
    let prompts: Vec<String> = caller
        .all_prompts()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert!(prompts.iter().all(|n| valid(n)), "{:?}", cut(&prompts));
    assert!(
        prompts.iter().any(|n| n == "odd_fine-name.v2"),
        "{:?}",
        cut(&prompts)
    );
    for left_out in ["odd_", "odd_a b", "odd_new\nline"] {
        match caller.call_tool(left_out, json!({})).await {
            Err(CallError::Rpc(error)) => assert_eq!(error.code, -32602, "{error:?}"),
            other => panic!("`{left_out}` is served: {other:?}"),
        }
    }
    let answered = caller.call_tool("odd_answer", json!({})).await.unwrap();
    assert_eq!(answered.text(), "answered");
    caller.close().await;
}

#[mcp_runtime::test]
async fn a_listing_of_more_than_a_million_items_fails_naming_the_bound() {
    use mcp_runtime::client::MAX_ITEMS;
    // The bound is checked before any item is read, so the items need not be prompts: a
    // page of `0`s is two bytes an item.
    let listing = |items: usize| async move {
        let client = Client::builder()
            .era(Era::Handshake)
            .stdio(hostile("many_items", &[("ITEMS", &items.to_string())]))
            .await
            .unwrap();
        let listing = client.all_prompts().await;
        client.close().await;
        listing
    };
    match listing(MAX_ITEMS).await {
        Err(CallError::Protocol(message)) => {
            assert!(message.contains("is malformed"), "{message}");
        }
        other => panic!("a page of {MAX_ITEMS} items is read: {other:?}"),
    }
    match listing(MAX_ITEMS + 1).await {
        Err(CallError::Protocol(message)) => {
            assert!(message.contains("`prompts/list`"), "{message}");
            assert!(message.contains("more than 1000000 items"), "{message}");
        }
        other => panic!("a page past {MAX_ITEMS} items is refused: {other:?}"),
    }
}

/// A client whose sampling handler answers `{"fill": N}` with N bytes of text, counts the
/// requests `{"probe": true}`, and holds every other request for as long as it lives.
fn sampling_filler(
    probes: std::sync::Arc<std::sync::atomic::AtomicUsize>,
) -> mcp_runtime::client::ClientBuilder {
    Client::builder()
        .era(Era::Handshake)
        .on_sampling(move |request| {
            let probes = probes.clone();
            async move {
                if let Some(bytes) = request["fill"].as_u64() {
                    let text = "x".repeat(usize::try_from(bytes).unwrap());
                    return Ok(json!({
                        "role": "assistant",
                        "content": { "type": "text", "text": text },
                        "model": "test-model",
                    }));
                }
                if request["probe"] == true {
                    probes.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
                std::future::pending().await
            }
        })
}

#[mcp_runtime::test]
async fn refusals_of_the_servers_requests_past_256_on_their_way_are_dropped() {
    use mcp_runtime::client::MAX_SERVER_REQUESTS;
    // The lines a stdio server's input holds waiting (the book's table of bounds), and the
    // refusals that may wait to be written past them.
    const QUEUED_LINES: usize = 64;
    const REFUSALS: usize = 256;
    const FLOOD: usize = MAX_SERVER_REQUESTS + QUEUED_LINES + REFUSALS + 100;
    let client = sampling_filler(Default::default())
        .stdio(hostile(
            "refusal_flood",
            &[("FLOOD", &FLOOD.to_string()), ("PAUSE", "2")],
        ))
        .await
        .unwrap();
    // The server stops reading while its requests come: the answer to the first fills its
    // input, MAX_SERVER_REQUESTS are held by the handler, and the refusals wait to be
    // written until it reads again.
    let flooded = client.call_tool("flood", json!({})).await.unwrap();
    assert_eq!(flooded.text(), "flooded");
    let refused = || async {
        let refused = client.call_tool("refused", json!({})).await.unwrap();
        refused.text().parse::<usize>().unwrap()
    };
    // The refusals still waiting are written once the server reads again, some maybe after
    // the first `refused` call.
    eventually(Duration::from_secs(10), || async {
        let refused = refused().await;
        (refused >= REFUSALS)
            .then_some(())
            .ok_or_else(|| format!("only {refused} requests were refused"))
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let refused = refused().await;
    // The refusals that found a waiting line free were written at once: at most as many
    // as it holds. Without the bound on the others, all of them would be.
    assert!(
        (REFUSALS..=QUEUED_LINES + REFUSALS).contains(&refused),
        "of {FLOOD} requests past the {MAX_SERVER_REQUESTS} answered, {refused} are refused"
    );
    client.close().await;
}

#[mcp_runtime::test]
async fn answers_a_server_does_not_read_are_given_up_after_the_clients_timeout() {
    use std::sync::atomic::Ordering;
    let probes = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let client = sampling_filler(probes.clone())
        .timeout(Duration::from_secs(1))
        .stdio(hostile("deaf", &[("PINGS", "100"), ("PAUSE", "3")]))
        .await
        .unwrap();
    // The server stops reading, fills its input and the lines waiting to be written, then
    // sends pings: the answers that cannot be written hold every place for the server's
    // requests until they are given up.
    let deaf = client.call_tool("deaf", json!({})).await.unwrap();
    assert_eq!(deaf.text(), "deaf");
    // Its request three seconds later finds the places free again.
    eventually(Duration::from_secs(15), || async {
        (probes.load(Ordering::SeqCst) == 1)
            .then_some(())
            .ok_or_else(|| "the request after the stalled answers was never handled".to_owned())
    })
    .await;
    tokio::time::timeout(Duration::from_secs(20), client.close())
        .await
        .expect("closing waits for the server to read its input");
}

#[mcp_runtime::test]
async fn a_mounted_change_the_gateway_refuses_leaves_the_version_served_before() {
    let (_gateway, caller) = gateway_over("reshaper", "reschema", &[]).await;
    // Version 1 of `reshaped` takes a string, not named arguments: it cannot be served.
    caller.call_tool("reshaper_bump", json!({})).await.unwrap();
    let tools = wait_for_tool(&caller, "reshaper_marker1").await;
    let reshaped = tools
        .iter()
        .find(|t| t.name == "reshaper_reshaped")
        .expect("the version served before the refused change is gone");
    assert_eq!(reshaped.description.as_deref(), Some("version 0"));
    let answered = caller
        .call_tool("reshaper_reshaped", json!({}))
        .await
        .unwrap();
    assert_eq!(answered.text(), "answered");
    caller.close().await;
}
