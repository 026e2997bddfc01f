//! Tools and a prompt that ask the client mid-request, for the multi round-trip scenarios of
//! 2026-07-28 (`input-required-result-*`, SEP-2322). They use the ordinary `ctx.elicit`,
//! `ctx.sample` and `ctx.roots`: in the handshake era the client is asked over the
//! connection; in the stateless era the call ends with an `InputRequiredResult` and runs
//! again when the client retries with the answers. `ctx.name_inputs` gives the input
//! requests the keys the scenarios expect.

use mcp_runtime::prelude::*;
use std::future::IntoFuture;

use mcp_runtime::{ClientError, Roots, schemars, serde, tokio};

/// The user's name.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct Name {
    /// Your name
    name: String,
}

/// A confirmation.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct Confirmation {
    /// Whether you confirm
    ok: bool,
}

/// A favourite colour.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct Colour {
    /// Your favorite color
    color: String,
}

/// The context a prompt should use.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct PromptContext {
    /// The context to use
    context: String,
}

fn name_of(answer: Elicitation<Name>) -> String {
    match answer {
        Elicitation::Accept(Name { name }) => name,
        Elicitation::Decline | Elicitation::Cancel => "stranger".to_owned(),
    }
}

fn confirmed(answer: Elicitation<Confirmation>) -> bool {
    matches!(answer, Elicitation::Accept(Confirmation { ok: true }))
}

fn describe_roots(roots: &Roots) -> String {
    let uris: Vec<&str> = roots.as_slice().iter().map(|r| r.uri.as_str()).collect();
    format!("{} root(s): {}", uris.len(), uris.join(", "))
}

/// Asks the user's name (elicitation) and greets them.
#[tool]
async fn test_input_required_result_elicitation(ctx: Context) -> Result<String, ToolError> {
    ctx.name_inputs(["user_name"]);
    let answer = ctx.elicit::<Name>("What is your name?").await?;
    Ok(format!("Hello, {}!", name_of(answer)))
}

/// Asks the model a question (sampling) and returns its answer.
#[tool(annotations(open_world))]
async fn test_input_required_result_sampling(ctx: Context) -> Result<String, ToolError> {
    ctx.name_inputs(["capital_question"]);
    let reply = ctx
        .sample("What is the capital of France?")
        .max_tokens(100)
        .await?;
    Ok(format!("LLM response: {}", reply.text()))
}

/// Asks the client's roots and lists them.
#[tool]
async fn test_input_required_result_list_roots(ctx: Context) -> Result<String, ToolError> {
    ctx.name_inputs(["client_roots"]);
    let roots = ctx.roots().await?;
    Ok(format!("Client roots: {}", describe_roots(&roots)))
}

/// Asks a confirmation; its answer comes back through the sealed `requestState`.
#[tool]
async fn test_input_required_result_request_state(ctx: Context) -> Result<String, ToolError> {
    ctx.name_inputs(["confirm"]);
    let answer = ctx.elicit::<Confirmation>("Please confirm").await?;
    Ok(format!("state-ok: confirmed={}", confirmed(answer)))
}

/// Asks for three inputs at once: a name, a model's greeting and the client's roots.
#[tool(annotations(open_world))]
async fn test_input_required_result_multiple_inputs(ctx: Context) -> Result<String, ToolError> {
    ctx.name_inputs(["user_name", "greeting", "client_roots"]);
    let (name, greeting, roots) = tokio::join!(
        ctx.elicit::<Name>("What is your name?"),
        ctx.sample("Generate a greeting")
            .max_tokens(50)
            .into_future(),
        ctx.roots(),
    );
    // Every request is made before any error ends the call: all three are asked together.
    let (name, greeting, roots) = (name?, greeting?, roots?);
    Ok(format!(
        "{} Name: {}. {}",
        greeting.text(),
        name_of(name),
        describe_roots(&roots)
    ))
}

/// Asks two questions, the second after the first is answered.
#[tool]
async fn test_input_required_result_multi_round(ctx: Context) -> Result<String, ToolError> {
    ctx.name_inputs(["step1", "step2"]);
    let name = name_of(ctx.elicit::<Name>("Step 1: What is your name?").await?);
    let color = match ctx
        .elicit::<Colour>("Step 2: What is your favorite color?")
        .await?
    {
        Elicitation::Accept(Colour { color }) => color,
        Elicitation::Decline | Elicitation::Cancel => "none".to_owned(),
    };
    Ok(format!("{name}'s favorite color is {color}."))
}

/// Asks a confirmation; a retry whose `requestState` was altered is refused.
#[tool]
async fn test_input_required_result_tampered_state(ctx: Context) -> Result<String, ToolError> {
    ctx.name_inputs(["confirm"]);
    let answer = ctx.elicit::<Confirmation>("Please confirm").await?;
    Ok(format!("state-ok: confirmed={}", confirmed(answer)))
}

/// Asks only what the client declared it can answer: the user's name (elicitation) and a
/// model's completion (sampling), each when supported.
#[tool(annotations(open_world))]
async fn test_input_required_result_capabilities(ctx: Context) -> Result<String, ToolError> {
    let (name, reply) = tokio::join!(
        ctx.elicit::<Name>("What is your name?"),
        ctx.sample("What is the capital of France?")
            .max_tokens(100)
            .into_future(),
    );
    let mut parts = Vec::new();
    match name {
        Ok(answer) => parts.push(format!("name: {}", name_of(answer))),
        Err(ClientError::NotSupported { .. }) => parts.push("elicitation not supported".into()),
        Err(e) => return Err(e.into()),
    }
    match reply {
        Ok(reply) => parts.push(format!("sampling: {}", reply.text())),
        Err(ClientError::NotSupported { .. }) => parts.push("sampling not supported".into()),
        Err(e) => return Err(e.into()),
    }
    Ok(parts.join("; "))
}

/// A prompt that asks the user for the context it should use.
#[prompt(title = "Prompt Requiring Input")]
async fn test_input_required_result_prompt(ctx: Context) -> Result<String, ClientError> {
    ctx.name_inputs(["user_context"]);
    let context = match ctx
        .elicit::<PromptContext>("What context should the prompt use?")
        .await?
    {
        Elicitation::Accept(PromptContext { context }) => context,
        Elicitation::Decline | Elicitation::Cancel => "no particular context".to_owned(),
    };
    Ok(format!("Answer using this context: {context}"))
}

/// Asks the user's name while reporting progress: in the stateless era the stream carries
/// notifications and the `InputRequiredResult`, never a request to the client.
#[tool]
async fn test_streaming_elicitation(ctx: Context) -> Result<String, ToolError> {
    ctx.progress(0.0, Some(1.0), Some("asking the user".to_owned()))
        .await;
    let answer = ctx.elicit::<Name>("What is your name?").await?;
    Ok(format!("Hello, {}!", name_of(answer)))
}

/// Logs at every level; a stateless request that set no `logLevel` receives none of it.
#[tool]
async fn test_logging_tool(ctx: Context) -> String {
    ctx.debug("a debug message").await;
    ctx.info("an info message").await;
    ctx.warning("a warning message").await;
    ctx.error("an error message").await;
    "Logged one message at each of four levels".to_owned()
}

/// Needs sampling and fails without it: a stateless client that did not declare `sampling`
/// gets a `MissingRequiredClientCapabilityError` (-32021).
#[tool(annotations(open_world))]
async fn test_missing_capability(ctx: Context) -> Result<String, ToolError> {
    let reply = ctx.sample("Say hello").max_tokens(20).await?;
    Ok(format!("LLM response: {}", reply.text()))
}
