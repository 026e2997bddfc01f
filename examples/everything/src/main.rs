//! The server the official MCP conformance suite (`@modelcontextprotocol/conformance`)
//! tests: every tool, resource, prompt and completion its server scenarios call, with the
//! names, arguments and results they expect. The book's conformance chapter lists each
//! scenario and how this server answers it.
//!
//! - `tools`: content of every type, a tool error, logging, progress, a response stream
//!   closed mid-call;
//! - `requests`: sampling and elicitation, including SEP-1034 defaults and SEP-1330 enums;
//! - `resources`: text, binary, a template, and a resource that changes every 3 seconds;
//! - `prompts`: plain, with arguments (and their completion), with a resource, with an image;
//! - `round_trips`: multi round-trip requests of the stateless era;
//! - `tasks`: the tasks extension, and an argument mirrored into an HTTP header;
//! - `skills/`: two Agent Skills, embedded at build time and served as the skills extension
//!   (SEP-2640).
//!
//! Run it with `cargo run -p everything`; it speaks MCP on standard input and output.
//! With `--http ADDR` it serves Streamable HTTP on `ADDR` (e.g. `127.0.0.1:3000`, endpoint `/mcp`).

mod media;
mod prompts;
mod requests;
mod resources;
mod round_trips;
mod tasks;
mod tools;

/// The skills of `skills/`, embedded in the binary.
fn skills() -> mcp_runtime::Skills {
    macro_rules! skill_files {
        ($($path:literal),* $(,)?) => {
            mcp_runtime::Skills::new()
                $(.file($path, include_bytes!(concat!("../skills/", $path)).as_slice()))*
        };
    }
    skill_files![
        "pdf-processing/SKILL.md",
        "pdf-processing/references/FORMS.md",
        "pdf-processing/scripts/fill.py",
        "release-notes/SKILL.md",
    ]
}

#[mcp_runtime::main]
async fn main() -> mcp_runtime::Result<()> {
    let mut builder = mcp_runtime::server!()
        .title("MCP conformance fixture")
        .instructions(
            "The fixture of the MCP conformance suite: each tool, resource and prompt answers one scenario of the suite.",
        );
    builder = builder.skills(skills());
    // Replicas behind a load balancer share the key that seals `requestState`.
    if let Ok(key) = std::env::var("MCP_STATE_KEY") {
        builder = builder.request_state_keys(key.into_bytes(), []);
    }
    #[cfg(feature = "redis")]
    if let Ok(url) = std::env::var("MCP_REDIS_URL") {
        return replica(builder, &url).await;
    }
    let server = builder.build()?;
    resources::spawn_watched_resource_changes(&server);
    server.serve().await
}

/// One replica of several sharing Redis at `url`: Streamable HTTP at the `--http` address.
#[cfg(feature = "redis")]
async fn replica(builder: mcp_runtime::ServerBuilder, url: &str) -> mcp_runtime::Result<()> {
    let redis = mcp_runtime::redis::RedisCluster::connect(url).await?;
    let server = redis.server(builder).build()?;
    resources::spawn_watched_resource_changes(&server);
    let addr = std::env::args()
        .skip_while(|a| a != "--http")
        .nth(1)
        .ok_or_else(|| mcp_runtime::Error::Usage("a replica needs --http ADDR".into()))?;
    let options = redis.http(mcp_runtime::http::HttpOptions::default());
    server.serve_http_with(addr, options).await
}
