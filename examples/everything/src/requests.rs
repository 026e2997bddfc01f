//! Tools that ask the client: for a model's completion (sampling) and for the user's input
//! (elicitation), in the form shapes SEP-1034 (defaults) and SEP-1330 (enums) added.

use mcp_runtime::prelude::*;
use mcp_runtime::{schemars, serde, serde_json};

/// Tests server-initiated sampling (LLM completion request).
#[tool(annotations(open_world))]
async fn test_sampling(
    ctx: Context,
    /// The prompt to send to the LLM.
    prompt: String,
) -> Result<String, ToolError> {
    let reply = ctx.sample(prompt).max_tokens(100).await?;
    Ok(format!("LLM response: {}", reply.text()))
}

/// Describes an elicitation's outcome as the scenarios expect: the action, then what the user
/// submitted, its fields in the form's order.
fn describe<T: serde::Serialize>(answer: Elicitation<T>) -> String {
    match answer {
        Elicitation::Accept(content) => {
            // A form holds strings, numbers, booleans and enums only: it always serialises.
            let content = serde_json::to_string(&content).unwrap_or_default();
            format!("action=accept, content={content}")
        }
        Elicitation::Decline => "action=decline, content={}".to_owned(),
        Elicitation::Cancel => "action=cancel, content={}".to_owned(),
    }
}

/// Who the user is, with the field descriptions the scenario documents.
#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct UserInfo {
    /// User's response
    username: String,
    /// User's email address
    email: String,
}

/// Tests server-initiated elicitation (user input request).
#[tool]
async fn test_elicitation(
    ctx: Context,
    /// The message to show the user.
    message: String,
) -> Result<String, ToolError> {
    let answer = ctx.elicit::<UserInfo>(message).await?;
    Ok(format!("User response: {}", describe(answer)))
}

/// A form whose every field has a default (SEP-1034), one of each primitive type.
#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde")]
#[schemars(crate = "mcp_runtime::schemars")]
struct ProfileWithDefaults {
    /// User name
    #[serde(default = "default_name")]
    name: String,
    /// User age
    #[serde(default = "default_age")]
    age: i64,
    /// User score
    #[serde(default = "default_score")]
    score: f64,
    /// User status
    #[serde(default = "default_status")]
    status: Status,
    /// Verification status
    #[serde(default = "default_verified")]
    verified: bool,
}

fn default_name() -> String {
    "John Doe".into()
}

fn default_age() -> i64 {
    30
}

fn default_score() -> f64 {
    95.5
}

fn default_status() -> Status {
    Status::Active
}

fn default_verified() -> bool {
    true
}

// The variants have no doc comments: a variant's doc comment is its title, which would make
// this a titled enum (`oneOf`) instead of a plain `enum` list.
#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde", rename_all = "lowercase")]
#[schemars(crate = "mcp_runtime::schemars")]
enum Status {
    Active,
    Inactive,
    Pending,
}

/// Tests elicitation with default values per SEP-1034.
#[tool]
async fn test_elicitation_sep1034_defaults(ctx: Context) -> Result<String, ToolError> {
    let answer = ctx
        .elicit::<ProfileWithDefaults>("Please review and update the form fields with defaults")
        .await?;
    Ok(format!("Elicitation completed: {}", describe(answer)))
}

/// A form with each kind of enum field SEP-1330 defines.
#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde", rename_all = "camelCase")]
#[schemars(crate = "mcp_runtime::schemars")]
struct EnumChoices {
    /// Select one option
    untitled_single: PlainOption,
    /// Select one option with titles
    titled_single: TitledOption,
    /// Select one option (legacy)
    // The legacy titled enum of 2025-06-18: `enumNames` beside `enum`.
    #[schemars(extend("enumNames" = ["Option One", "Option Two", "Option Three"]))]
    legacy_enum: LegacyOption,
    /// Select multiple options
    #[schemars(length(min = 1, max = 3))]
    untitled_multi: Vec<PlainOption>,
    /// Select multiple options with titles
    #[schemars(length(min = 1, max = 3))]
    titled_multi: Vec<TitledChoice>,
}

// No doc comments on the variants: an untitled enum.
#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde", rename_all = "lowercase")]
#[schemars(crate = "mcp_runtime::schemars")]
enum PlainOption {
    Option1,
    Option2,
    Option3,
}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde", rename_all = "lowercase")]
#[schemars(crate = "mcp_runtime::schemars")]
enum TitledOption {
    /// First Option
    Value1,
    /// Second Option
    Value2,
    /// Third Option
    Value3,
}

// Untitled in Rust: its titles travel in `enumNames`, the form of 2025-06-18.
#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde", rename_all = "lowercase")]
#[schemars(crate = "mcp_runtime::schemars")]
enum LegacyOption {
    Opt1,
    Opt2,
    Opt3,
}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(crate = "mcp_runtime::serde", rename_all = "lowercase")]
#[schemars(crate = "mcp_runtime::schemars")]
enum TitledChoice {
    /// First Choice
    Value1,
    /// Second Choice
    Value2,
    /// Third Choice
    Value3,
}

/// Tests elicitation with enum schema improvements per SEP-1330.
#[tool]
async fn test_elicitation_sep1330_enums(ctx: Context) -> Result<String, ToolError> {
    let answer = ctx
        .elicit::<EnumChoices>("Please select options from the enum fields")
        .await?;
    Ok(format!("Elicitation completed: {}", describe(answer)))
}
