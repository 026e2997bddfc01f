//! A server with a tool for every supported parameter and return type, and tools whose
//! behaviour the end-to-end tests provoke: slow, fast, panicking, progress, logging.

use std::collections::HashMap;
use std::time::Duration;

use mcp_runtime::prelude::*;
use mcp_runtime::{schemars, serde, serde_json};

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

#[mcp_runtime::main]
async fn main() -> mcp_runtime::Result<()> {
    let page_size = std::env::var("PAGE_SIZE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(mcp_runtime::DEFAULT_PAGE_SIZE);
    let max_message_bytes = std::env::var("MAX_MESSAGE_BYTES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(mcp_runtime::DEFAULT_MAX_MESSAGE_BYTES);
    mcp_runtime::server!()
        .instructions("A catalogue of every kind of tool.")
        .page_size(page_size)
        .max_message_bytes(max_message_bytes)
        .serve_stdio()
        .await
}
