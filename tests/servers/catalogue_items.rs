//! The catalogue's items: a tool for every supported parameter and return type, tools whose
//! behaviour the end-to-end tests provoke (slow, fast, panicking, progress, logging, run-time
//! changes), prompts, resources and templates. Compiled into the `catalogue` server and into
//! the tests that drive it in process.

#![allow(dead_code)]

use std::collections::HashMap;
use std::time::Duration;

use mcp_runtime::prelude::*;
use mcp_runtime::{GetPromptResult, PromptMessage, Role, schemars, serde, serde_json};

/// A colour.
#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde", rename_all = "lowercase")]
#[schemars(crate = "mcp_runtime::schemars")]
enum Colour {
    Red,
    Green,
    Blue,
}

/// A point on a plane.
#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct Point {
    /// Horizontal position.
    x: f64,
    /// Vertical position.
    y: f64,
}

/// A labelled tree, to show that recursive types keep a `$ref`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct Tree {
    label: String,
    #[serde(default)]
    children: Vec<Tree>,
}

/// The arguments of `search`, as one struct.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct SearchArgs {
    /// What to look for.
    query: String,
    /// How many results at most.
    limit: Option<u32>,
}

/// Takes one parameter of every supported kind and describes what it received.
#[tool(annotations(read_only))]
#[allow(clippy::too_many_arguments)]
fn every_parameter(
    /// A signed integer.
    integer: i64,
    /// An unsigned small integer.
    small: u8,
    /// A float.
    float: f64,
    /// A flag.
    flag: bool,
    /// Some text.
    text: String,
    /// An optional number.
    maybe: Option<i32>,
    /// A list of words.
    words: Vec<String>,
    /// A colour.
    colour: Colour,
    /// A point.
    point: Point,
    /// Counts by name.
    counts: HashMap<String, i64>,
    /// Anything at all.
    anything: serde_json::Value,
) -> String {
    let colour = match colour {
        Colour::Red => "red",
        Colour::Green => "green",
        Colour::Blue => "blue",
    };
    format!(
        "integer={integer} small={small} float={float} flag={flag} text={text} maybe={maybe:?} words={words:?} colour={colour} point=({},{}) counts={} anything={anything}",
        point.x,
        point.y,
        counts.len()
    )
}

/// Counts the nodes of a tree.
#[tool]
fn count_nodes(tree: Tree) -> String {
    fn count(t: &Tree) -> usize {
        1 + t.children.iter().map(count).sum::<usize>()
    }
    format!("{}: {}", tree.label, count(&tree))
}

/// Returns structured output that cannot be serialised (a map with non-string keys): a
/// defect of the server, answered as an internal error.
#[tool]
fn broken() -> Json<HashMap<(i32, i32), i32>> {
    Json(HashMap::from([((1, 2), 3)]))
}

/// Searches, taking its arguments as one struct.
#[tool(args)]
fn search(args: SearchArgs) -> String {
    format!("{} (limit {})", args.query, args.limit.unwrap_or(10))
}

/// Returns nothing.
#[tool(
    name = "do_nothing",
    title = "Do nothing",
    annotations(idempotent, destructive = false)
)]
fn nothing() {}

/// Returns a static string.
#[tool]
fn static_text() -> &'static str {
    "static"
}

/// Returns a float.
#[tool]
fn float() -> f64 {
    0.5
}

/// Returns a bool.
#[tool]
fn boolean() -> bool {
    true
}

/// Returns a point as structured output.
#[tool]
fn point() -> Json<Point> {
    Json(Point { x: 1.0, y: 2.0 })
}

/// Returns a list as structured output, wrapped in `result`.
#[tool]
fn primes() -> Json<Vec<u32>> {
    Json(vec![2, 3, 5, 7])
}

/// Returns an image.
#[tool]
fn image() -> Image {
    Image::png([0x89, b'P', b'N', b'G'])
}

/// Returns audio.
#[tool]
fn audio() -> Audio {
    Audio::wav(b"RIFF")
}

/// Returns a resource link.
#[tool]
fn link() -> ResourceLink {
    ResourceLink::new("file:///tmp/report.txt", "report").mime_type("text/plain")
}

/// Returns an embedded resource.
#[tool]
fn embedded() -> EmbeddedResource {
    EmbeddedResource::text("memo://1", "text/plain", "remember the milk")
}

/// Returns several content blocks.
#[tool]
fn several() -> Vec<Content> {
    vec![Content::text("one"), Image::png([1]).into()]
}

/// Returns a full result.
#[tool]
fn full() -> CallToolResult {
    let mut r = CallToolResult::new(vec![Content::text("full")]);
    r.meta = Some(serde_json::Map::from_iter([("traced".into(), true.into())]));
    r
}

/// Fails with a business error.
#[tool]
fn fail(
    /// Why it fails.
    reason: String,
) -> Result<String, ToolError> {
    Err(ToolError::new(format!("failed: {reason}")))
}

/// Returns an optional text.
#[tool]
fn maybe(
    /// Whether to say something.
    say: bool,
) -> Option<String> {
    say.then(|| "said".to_owned())
}

/// The primes below 10, if asked for: an `Option<Json<T>>` declares no output schema.
#[tool]
fn maybe_primes(
    /// Whether to find them.
    find: bool,
) -> Option<Json<Vec<u32>>> {
    find.then(|| Json(vec![2, 3, 5, 7]))
}

/// Sleeps, then answers; cancellable.
#[tool]
async fn sleep(
    ctx: Context,
    /// How long, in milliseconds.
    ms: u64,
) -> String {
    mcp_runtime::tokio::select! {
        () = mcp_runtime::tokio::time::sleep(Duration::from_millis(ms)) => format!("slept {ms} ms"),
        () = ctx.cancelled() => "cancelled".to_owned(),
    }
}

/// Answers at once.
#[tool]
async fn fast() -> &'static str {
    "fast"
}

/// Panics.
#[tool]
fn explode() -> String {
    panic!("the tool exploded")
}

/// Reports progress three times.
#[tool]
async fn progress(ctx: Context) -> &'static str {
    for i in 1..=3 {
        ctx.progress(f64::from(i), Some(3.0), format!("step {i}"))
            .await;
    }
    "done"
}

/// Logs one message at each of debug, info and error.
#[tool]
async fn log(ctx: Context) -> &'static str {
    ctx.debug("a debug message").await;
    ctx.info("an info message").await;
    ctx.error(serde_json::json!({"error": "an error message"}))
        .await;
    "logged"
}

// ---------------------------------------------------------------------------------------
// Prompts

/// Review the changes on a branch.
#[prompt(title = "Code review", complete(language = complete_language, max_files = complete_count))]
fn code_review(
    /// Branch to compare against, e.g. main.
    base_branch: String,
    /// The language of the code.
    language: Option<String>,
    /// How many files to look at, at most.
    max_files: Option<u32>,
) -> Vec<PromptMessage> {
    let language = language.unwrap_or_else(|| "any language".into());
    let limit = max_files.map_or_else(String::new, |n| format!(" (at most {n} files)"));
    vec![
        PromptMessage::user(format!(
            "Review the {language} changes against `{base_branch}`{limit}."
        )),
        PromptMessage::assistant("I will start with the largest diff."),
    ]
}

/// 1 to 150: more than one completion may carry.
fn complete_count(prefix: &str) -> Vec<String> {
    (1..=150)
        .map(|n| n.to_string())
        .filter(|n| n.starts_with(prefix))
        .collect()
}

fn complete_language(prefix: &str) -> Vec<String> {
    ["go", "python", "ruby", "rust", "typescript"]
        .into_iter()
        .filter(|l| l.starts_with(prefix))
        .map(String::from)
        .collect()
}

/// A greeting, as plain text.
#[prompt]
fn greeting(
    /// Who to greet.
    name: String,
) -> String {
    format!("Say hello to {name}.")
}

/// A prompt with an embedded resource and an image.
#[prompt(name = "rich_prompt")]
fn rich() -> GetPromptResult {
    GetPromptResult::new(vec![
        PromptMessage::new(
            Role::User,
            EmbeddedResource::text("memo://1", "text/plain", "remember the milk"),
        ),
        PromptMessage::new(Role::User, Image::png([1, 2, 3])),
        PromptMessage::new(Role::User, ResourceLink::new("memo://2", "second memo")),
    ])
    .description("Rich content")
}

/// A prompt whose rendering fails.
#[prompt]
fn failing_prompt() -> Result<String, String> {
    Err("the template store is offline".into())
}

// ---------------------------------------------------------------------------------------
// Resources

/// The static greeting.
#[resource(
    "test://static-text",
    mime = "text/plain",
    title = "Static text",
    audience(user),
    priority = 0.5
)]
fn static_text_resource() -> &'static str {
    "Hello from a static resource"
}

/// Some bytes.
#[resource(
    "test://static-binary",
    mime = "application/octet-stream",
    size = 4,
    cache(ttl = "1h", public)
)]
fn static_binary() -> Vec<u8> {
    vec![0, 1, 2, 255]
}

/// A resource that can change; subscribe to hear about it.
#[resource("test://watched", mime = "text/plain")]
fn watched() -> String {
    "the current state".into()
}

/// Announces that `test://watched` changed.
#[tool]
fn touch_watched(ctx: Context) -> &'static str {
    if let Some(server) = ctx.server() {
        server.notify_resource_updated("test://watched");
    }
    "touched"
}

/// Hides or shows a tool at run time.
#[tool]
fn toggle_tool(
    ctx: Context,
    /// The tool.
    name: String,
    /// Whether it should be available.
    enabled: bool,
) -> Result<String, ToolError> {
    let server = ctx.server().ok_or_else(|| ToolError::new("no server"))?;
    let changed = if enabled {
        server.enable_tool(&name)
    } else {
        server.disable_tool(&name)
    };
    Ok(format!("changed: {changed}"))
}

/// Hides or shows several tools at once: one `list_changed` notification follows.
#[tool]
fn toggle_tools(
    ctx: Context,
    /// The tools.
    names: Vec<String>,
    /// Whether they should be available.
    enabled: bool,
) -> Result<String, ToolError> {
    let server = ctx.server().ok_or_else(|| ToolError::new("no server"))?;
    let changed = names
        .iter()
        .filter(|name| {
            if enabled {
                server.enable_tool(name)
            } else {
                server.disable_tool(name)
            }
        })
        .count();
    Ok(format!("changed {changed}"))
}

/// Data of one item.
#[resource("test://items/{id}/data", mime = "application/json", list = list_items, complete(id = complete_item))]
fn item_data(
    /// The item's number.
    id: u64,
) -> Result<Json<serde_json::Value>, mcp_runtime::protocol::RpcError> {
    if id > 3 {
        return Err(mcp_runtime::resource_not_found(&format!(
            "test://items/{id}/data"
        )));
    }
    Ok(Json(
        serde_json::json!({ "id": id, "name": format!("item {id}") }),
    ))
}

fn list_items() -> Vec<mcp_runtime::Resource> {
    (1..=3)
        .map(|i| mcp_runtime::Resource::new(format!("test://items/{i}/data"), format!("item {i}")))
        .collect()
}

fn complete_item(prefix: &str, context: &mcp_runtime::CompletionContext) -> Vec<String> {
    let _ = &context.arguments;
    (1..=3)
        .map(|i| i.to_string())
        .filter(|i| i.starts_with(prefix))
        .collect()
}

/// A file under a root, by path (reserved expansion keeps the slashes).
/// Numbers as JSON, with no MIME type declared: listed as `application/json`, as it reads.
#[resource("test://json-numbers")]
fn json_numbers() -> Json<Vec<u32>> {
    Json(vec![1, 2, 3])
}

/// A number's digits as JSON, with no MIME type declared.
#[resource("test://digits/{n}")]
fn digits(n: u64) -> Result<Json<Vec<u32>>, String> {
    Ok(Json(
        n.to_string()
            .chars()
            .filter_map(|c| c.to_digit(10))
            .collect(),
    ))
}

#[resource("test://files/{+path}", mime = "text/plain")]
fn file(path: String) -> String {
    format!("contents of {path}")
}

/// A search with optional query parameters.
#[resource("test://search{?q,limit}")]
fn search_resource(q: Option<String>, limit: Option<u32>) -> String {
    format!("q={q:?} limit={limit:?}")
}

// ---------------------------------------------------------------------------------------
// Requests to the client

/// Asks the client's model.
#[tool]
async fn ask_model(
    ctx: Context,
    /// The question.
    question: String,
) -> Result<String, ToolError> {
    let reply = ctx
        .sample(question)
        .system_prompt("Answer briefly.")
        .max_tokens(50)
        .model_preferences(mcp_runtime::ModelPreferences {
            hints: vec![mcp_runtime::ModelHint {
                name: Some("sonnet".into()),
            }],
            intelligence_priority: Some(0.8),
            ..Default::default()
        })
        .stop_sequences(["\n\n"])
        .include_context(mcp_runtime::IncludeContext::ThisServer)
        .temperature(0.2)
        .await?;
    Ok(format!("{} (by {})", reply.text(), reply.model))
}

/// A seat preference, asked of the user.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct SeatChoice {
    /// Your name.
    name: String,
    /// Window or aisle.
    seat: Seat,
    /// How many bags.
    #[serde(default = "one")]
    bags: u32,
}

fn one() -> u32 {
    1
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde", rename_all = "lowercase")]
#[schemars(crate = "mcp_runtime::schemars")]
enum Seat {
    /// By the window
    Window,
    /// On the aisle
    Aisle,
}

/// Asks the user where to sit.
#[tool]
async fn choose_seat(ctx: Context) -> Result<String, ToolError> {
    Ok(
        match ctx
            .elicit::<SeatChoice>("Where would you like to sit?")
            .await?
        {
            mcp_runtime::Elicitation::Accept(choice) => {
                let seat = match choice.seat {
                    Seat::Window => "window",
                    Seat::Aisle => "aisle",
                };
                format!(
                    "{} sits by the {seat} with {} bag(s)",
                    choice.name, choice.bags
                )
            }
            mcp_runtime::Elicitation::Decline => "declined".into(),
            mcp_runtime::Elicitation::Cancel => "cancelled".into(),
        },
    )
}

/// Asks the user to open a sign-in page.
#[tool]
async fn sign_in(ctx: Context) -> Result<String, ToolError> {
    let action = ctx
        .elicit_url(
            "Sign in to continue",
            "https://example.com/sign-in",
            "sign-in-1",
        )
        .await?;
    Ok(format!("{action:?}"))
}

/// Lists the client's roots.
#[tool]
async fn list_roots(ctx: Context) -> Result<String, ToolError> {
    let roots = ctx.roots().await?;
    Ok(roots
        .as_slice()
        .iter()
        .map(|r| r.uri.clone())
        .collect::<Vec<_>>()
        .join(","))
}

/// Resolves a path inside the client's roots.
#[tool]
async fn resolve_path(
    ctx: Context,
    /// The path.
    path: String,
) -> Result<String, ToolError> {
    let roots = ctx.roots().await?;
    let resolved = roots.resolve(&path)?;
    Ok(resolved.relative().display().to_string())
}

/// Pings the client.
#[tool]
async fn ping_client(ctx: Context) -> Result<&'static str, ToolError> {
    ctx.ping().await?;
    Ok("pong")
}

// ---------------------------------------------------------------------------------------
// Transport behaviour

/// Says who the caller is, as the transport authenticated them.
#[tool]
fn whoami(ctx: Context) -> String {
    match ctx.auth() {
        Some(caller) => format!("{} [{}]", caller.subject, caller.scopes.join(" ")),
        None => "anonymous".into(),
    }
}

/// Signs in (for the message log's redaction: the password must never be written).
#[tool]
fn login(
    /// Who.
    user: String,
    /// Their secret.
    password: String,
) -> String {
    format!("welcome {user} ({} characters of secret)", password.len())
}

/// Logs to the client in a loop that awaits nothing but the runtime's own futures, forever:
/// only the call's time limit or a cancellation stops it.
#[tool]
async fn chatter(ctx: Context) -> &'static str {
    loop {
        ctx.info("chatter").await;
    }
}

/// Reports that it started, then sleeps, ignoring cancellation: only dropping the call
/// stops it.
#[tool]
async fn stubborn(
    ctx: Context,
    /// How long, in milliseconds.
    ms: u64,
) -> String {
    ctx.progress(0.0, None, "started").await;
    mcp_runtime::tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("slept {ms} ms, stubbornly")
}

/// Reports progress `steps` times, pausing between reports; cancellable.
#[tool]
async fn slow_progress(
    ctx: Context,
    /// How many reports.
    steps: u32,
    /// The pause between two reports, in milliseconds.
    pause_ms: u64,
) -> &'static str {
    for step in 1..=steps {
        if step > 1 {
            mcp_runtime::tokio::select! {
                () = mcp_runtime::tokio::time::sleep(Duration::from_millis(pause_ms)) => {}
                () = ctx.cancelled() => return "cancelled",
            }
        }
        ctx.progress(
            f64::from(step),
            Some(f64::from(steps)),
            format!("step {step}"),
        )
        .await;
    }
    "finished"
}

/// Reports progress, closes its response stream (over HTTP; the client resumes it), then
/// reports more progress and answers.
#[tool]
async fn close_stream_midway(ctx: Context) -> &'static str {
    ctx.progress(1.0, Some(3.0), "before closing".to_owned())
        .await;
    ctx.close_stream(Some(Duration::from_millis(50)));
    mcp_runtime::tokio::time::sleep(Duration::from_millis(100)).await;
    ctx.progress(2.0, Some(3.0), "after closing".to_owned())
        .await;
    ctx.progress(3.0, Some(3.0), "about to answer".to_owned())
        .await;
    "answered after the stream was closed"
}

// ---------------------------------------------------------------------------------------
// The tasks extension, cancellation and mirrored headers (2026-07-28)

/// Works for a while; a task for clients that declare the tasks extension.
#[tool(task)]
async fn chore(
    /// How long, in milliseconds.
    ms: u64,
) -> String {
    mcp_runtime::tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("chore done after {ms} ms")
}

/// Only ever a task; fails with a tool error after a moment.
#[tool(task = "required")]
async fn doomed_chore() -> Result<String, ToolError> {
    mcp_runtime::tokio::time::sleep(Duration::from_millis(50)).await;
    Err(ToolError::new("the chore failed"))
}

/// A yes or no.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct YesNo {
    /// Yes?
    yes: bool,
}

/// Asks whether to go ahead, as a task when it can be one.
#[tool(task)]
async fn ask_then_act(
    ctx: Context,
    /// What to do.
    what: String,
) -> Result<String, ToolError> {
    ctx.continue_as_task().await;
    let answer = ctx.elicit::<YesNo>(format!("Shall I {what}?")).await?;
    Ok(match answer.accepted() {
        Some(YesNo { yes: true }) => format!("did {what}"),
        _ => format!("did not {what}"),
    })
}

/// How many calls of `hold` were cancelled so far.
static HOLDS_CANCELLED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Holds until the call is cancelled, and counts the cancellation (a task for clients
/// that declare the tasks extension).
#[tool(task)]
async fn hold(ctx: Context) -> &'static str {
    let _count = HoldCount;
    ctx.cancelled().await;
    "cancelled"
}

/// Counts a held call that ended, in `HOLDS_CANCELLED`.
struct HoldCount;

impl Drop for HoldCount {
    // A cancelled handler is dropped at its next `.await`: the count is kept either way.
    fn drop(&mut self) {
        HOLDS_CANCELLED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Waits an hour without looking at its context: only the server dropping it ends it early,
/// which it counts in `HOLDS_CANCELLED`.
#[tool]
async fn deaf() -> &'static str {
    let _count = HoldCount;
    mcp_runtime::tokio::time::sleep(Duration::from_secs(3600)).await;
    "unreachable"
}

/// How many `hold`, `progress_then_hold` and `deaf` calls ended so far (each ends only when
/// cancelled).
#[tool]
fn holds_cancelled() -> String {
    HOLDS_CANCELLED
        .load(std::sync::atomic::Ordering::SeqCst)
        .to_string()
}

/// Runs a query in a region; HTTP clients mirror the routing arguments into headers.
#[tool(annotations(read_only))]
fn route(
    /// The region (`Mcp-Param-Region`).
    #[header]
    region: String,
    /// The shard (`Mcp-Param-Shard`).
    #[header]
    shard: Option<i64>,
    /// Whether to only pretend (`Mcp-Param-Dry-Run`).
    #[header]
    dry_run: Option<bool>,
    /// The query.
    query: String,
) -> String {
    format!("{query} in {region}, shard {shard:?}, dry run {dry_run:?}")
}

/// A resource that asks the reader's name before it can be read.
#[resource("test://asks-name", mime = "text/plain")]
async fn asks_name(ctx: Context) -> Result<String, mcp_runtime::ClientError> {
    let answer = ctx.elicit::<YesNo>("Are you sure?").await?;
    Ok(format!(
        "sure: {}",
        answer.accepted().is_some_and(|a| a.yes)
    ))
}

// ---------------------------------------------------------------------------------------
// Faults and limits

/// Sends `count` log messages of `bytes` bytes each, then answers.
#[tool]
async fn flood(ctx: Context, count: u32, bytes: usize) -> String {
    let text = "x".repeat(bytes);
    for _ in 0..count {
        ctx.info(text.as_str()).await;
    }
    format!("sent {count} messages")
}

/// Answers with a text of `megabytes` MiB.
#[tool]
fn enormous(megabytes: usize) -> String {
    "y".repeat(megabytes << 20)
}

/// Never finishes within its own limit of 200 ms; counts the times it was stopped.
#[tool(timeout = "200ms")]
async fn stuck() -> &'static str {
    struct Stopped;
    impl Drop for Stopped {
        fn drop(&mut self) {
            STUCK_STOPPED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
    let _stopped = Stopped;
    mcp_runtime::tokio::time::sleep(Duration::from_secs(3600)).await;
    "unreachable"
}

static STUCK_STOPPED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Blocks a thread past its limit of 200 ms, watching its context: counts the times it saw
/// itself stopped.
#[tool(timeout = "200ms")]
async fn stuck_blocking(ctx: Context) -> &'static str {
    let watched = ctx.clone();
    let _ = mcp_runtime::tokio::task::spawn_blocking(move || {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !watched.is_cancelled() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        if watched.is_cancelled() {
            STUCK_STOPPED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    })
    .await;
    "unreachable"
}

/// How many times `stuck` was stopped.
#[tool]
fn stuck_stopped() -> String {
    STUCK_STOPPED
        .load(std::sync::atomic::Ordering::SeqCst)
        .to_string()
}

/// How many Tokio tasks are alive in the server right now.
#[tool]
fn alive_tasks() -> String {
    mcp_runtime::tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks()
        .to_string()
}

/// Reports progress `count` times, `every_ms` apart, then answers.
#[tool]
async fn ticks(ctx: Context, count: u32, every_ms: u64) -> String {
    for i in 1..=count {
        mcp_runtime::tokio::time::sleep(Duration::from_millis(every_ms)).await;
        ctx.progress(f64::from(i), Some(f64::from(count)), format!("tick {i}"))
            .await;
    }
    format!("ticked {count} times")
}

// ---------------------------------------------------------------------------------------
// Stray output: what a stdio server's standard output must never carry

/// Prints `text` to standard output three ways: a line with `println!`, a partial line with
/// `print!`, and a line from a child process that inherits standard output. Over stdio all of
/// it must land on standard error, never between the protocol's frames.
#[tool]
fn print_stray(text: String) -> Result<&'static str, ToolError> {
    use std::io::Write as _;
    println!("{text} (println)");
    print!("{text} (print, no newline)");
    std::io::stdout()
        .flush()
        .map_err(|e| ToolError::new(format!("flush: {e}")))?;
    let child = std::process::Command::new("sh")
        .args(["-c", "echo \"$0 (child process)\"", &text])
        .status()
        .map_err(|e| ToolError::new(format!("cannot run sh: {e}")))?;
    if !child.success() {
        return Err(ToolError::new(format!("sh failed: {child}")));
    }
    Ok("printed")
}

// ---------------------------------------------------------------------------------------
// Waiting for a call to be running, rather than guessing how long it takes to start

/// How many calls of `hold_watched` have started so far.
static WATCHED_HOLDS_STARTED: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// `hold`, counting its starts: a test can wait until the call runs before it provokes
/// anything (a hang-up, a full session table).
#[tool]
async fn hold_watched(ctx: Context) -> &'static str {
    WATCHED_HOLDS_STARTED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    hold(ctx).await
}

/// How many `hold_watched` calls have started so far.
#[tool]
fn holds_started() -> String {
    WATCHED_HOLDS_STARTED
        .load(std::sync::atomic::Ordering::SeqCst)
        .to_string()
}

/// Reports progress once, then holds until the call is cancelled: a client sees the report
/// only if nothing between it and the server buffers the stream.
#[tool]
async fn progress_then_hold(ctx: Context) -> &'static str {
    let _count = HoldCount;
    ctx.progress(1.0, None, "started").await;
    ctx.cancelled().await;
    "cancelled"
}
