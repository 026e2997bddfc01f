//! `ctx.sample(…)`: asking the client's model for a completion (`sampling/createMessage`).

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Context;
use super::client::{ClientError, read_answer};
use crate::content::Role;
use crate::registry::ToolDescriptor;

/// One block of sampling content: text, image, audio, and (2025-11-25) tool use and results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SamplingContent {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// The bytes, base64-encoded.
        data: String,
        /// The MIME type.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// Audio, base64-encoded.
    Audio {
        /// The bytes, base64-encoded.
        data: String,
        /// The MIME type.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// The model asks to call a tool.
    ToolUse {
        /// The id of this call.
        id: String,
        /// The tool.
        name: String,
        /// Its arguments.
        input: Map<String, Value>,
    },
    /// The result of a tool call, sent back to the model.
    ToolResult {
        /// The id of the call this answers.
        #[serde(rename = "toolUseId")]
        tool_use_id: String,
        /// The result's content blocks.
        content: Vec<Value>,
        /// Whether the call failed.
        #[serde(rename = "isError", default, skip_serializing_if = "Option::is_none")]
        is_error: Option<bool>,
    },
}

/// Content that is one block or several.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany<T> {
    /// One block.
    One(T),
    /// Several blocks.
    Many(Vec<T>),
}

impl<T> OneOrMany<T> {
    /// The blocks, however many.
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        match self {
            OneOrMany::One(one) => std::slice::from_ref(one).iter(),
            OneOrMany::Many(many) => many.iter(),
        }
    }
}

/// One message of a sampling conversation.
///
/// ```
/// use mcp_runtime::SamplingMessage;
/// let m = SamplingMessage::user("What is 2 + 2?");
/// assert_eq!(serde_json::to_value(&m).unwrap()["content"]["text"], "What is 2 + 2?");
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: OneOrMany<SamplingContent>,
}

impl SamplingMessage {
    /// A text message from the user.
    pub fn user(text: impl Into<String>) -> Self {
        SamplingMessage {
            role: Role::User,
            content: OneOrMany::One(SamplingContent::Text { text: text.into() }),
        }
    }

    /// A text message from the assistant.
    pub fn assistant(text: impl Into<String>) -> Self {
        SamplingMessage {
            role: Role::Assistant,
            content: OneOrMany::One(SamplingContent::Text { text: text.into() }),
        }
    }
}

/// A hint naming a model (family) the server would prefer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelHint {
    /// A model name or part of one, e.g. `"claude-3-5-sonnet"` or `"sonnet"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The server's preferences for the client's choice of model; every priority is 0 to 1.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    /// Model names to consider, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hints: Vec<ModelHint>,
    /// How much cost matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_priority: Option<f64>,
    /// How much speed matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_priority: Option<f64>,
    /// How much capability matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intelligence_priority: Option<f64>,
}

/// Which MCP context the client should add to the prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IncludeContext {
    /// None.
    None,
    /// Context from this server.
    ThisServer,
    /// Context from every server the client is connected to.
    AllServers,
}

/// A tool the client's model may call while sampling (2025-11-25, `sampling.tools`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingTool {
    /// The tool's name.
    pub name: String,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of its arguments.
    pub input_schema: Value,
}

impl SamplingTool {
    /// A tool with a name, a description and an argument schema.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        SamplingTool {
            name: name.into(),
            description: Some(description.into()),
            input_schema,
        }
    }

    /// One of this server's own tools (`<add as Tool>::DESCRIPTOR`).
    pub fn from_descriptor(tool: &ToolDescriptor) -> Self {
        SamplingTool {
            name: tool.name.to_owned(),
            description: tool.description.map(str::to_owned),
            input_schema: (tool.input_schema)(),
        }
    }
}

/// The client's answer to `sampling/createMessage`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Who wrote it (the assistant).
    pub role: Role,
    /// What the model wrote.
    pub content: OneOrMany<SamplingContent>,
    /// The model that wrote it.
    pub model: String,
    /// Why it stopped: `endTurn`, `stopSequence`, `maxTokens`, `toolUse`, or another reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

impl CreateMessageResult {
    /// Every text block of the answer, joined.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|c| match c {
                SamplingContent::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The tool calls the model asked for.
    pub fn tool_uses(&self) -> impl Iterator<Item = &SamplingContent> {
        self.content
            .iter()
            .filter(|c| matches!(c, SamplingContent::ToolUse { .. }))
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CreateMessageParams {
    messages: Vec<SamplingMessage>,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system_prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model_preferences: Option<ModelPreferences>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    stop_sequences: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    include_context: Option<IncludeContext>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<SamplingTool>,
}

/// A sampling request being built; `.await` it to send it.
///
/// ```
/// use mcp_runtime::prelude::*;
///
/// /// Summarise a text with the client's model.
/// #[tool]
/// async fn summarise(ctx: Context, text: String) -> Result<String, ToolError> {
///     let reply = ctx
///         .sample(format!("Summarise in one sentence:\n{text}"))
///         .system_prompt("You write terse summaries.")
///         .max_tokens(200)
///         .await?;
///     Ok(reply.text())
/// }
/// # fn main() {}
/// ```
#[must_use = "a sampling request does nothing until it is awaited"]
pub struct SampleRequest<'a> {
    ctx: &'a Context,
    params: CreateMessageParams,
    timeout: Option<Duration>,
}

impl Context {
    /// Asks the client's model to answer `prompt` (one user message); configure the request
    /// with the builder methods, then `.await` it. Needs the client's `sampling` capability.
    pub fn sample(&self, prompt: impl Into<String>) -> SampleRequest<'_> {
        self.sample_messages(vec![SamplingMessage::user(prompt)])
    }

    /// Like [`Context::sample`], with a whole conversation.
    pub fn sample_messages(&self, messages: Vec<SamplingMessage>) -> SampleRequest<'_> {
        SampleRequest {
            ctx: self,
            params: CreateMessageParams {
                messages,
                max_tokens: 1000,
                system_prompt: None,
                model_preferences: None,
                stop_sequences: Vec::new(),
                include_context: None,
                temperature: None,
                tools: Vec::new(),
            },
            timeout: None,
        }
    }
}

impl SampleRequest<'_> {
    /// The most tokens the model may write (1000 unless set).
    pub fn max_tokens(mut self, tokens: u32) -> Self {
        self.params.max_tokens = tokens;
        self
    }

    /// A system prompt.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.params.system_prompt = Some(prompt.into());
        self
    }

    /// Preferences for the choice of model.
    pub fn model_preferences(mut self, preferences: ModelPreferences) -> Self {
        self.params.model_preferences = Some(preferences);
        self
    }

    /// Sequences at which the model stops.
    pub fn stop_sequences(
        mut self,
        sequences: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.params.stop_sequences = sequences.into_iter().map(Into::into).collect();
        self
    }

    /// Which MCP context the client adds.
    pub fn include_context(mut self, include: IncludeContext) -> Self {
        self.params.include_context = Some(include);
        self
    }

    /// The sampling temperature.
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.params.temperature = Some(temperature);
        self
    }

    /// Tools the model may call (needs the client's `sampling.tools` capability).
    pub fn tools(mut self, tools: impl IntoIterator<Item = SamplingTool>) -> Self {
        self.params.tools = tools.into_iter().collect();
        self
    }

    /// How long to wait for the client (the server's default unless set).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
}

impl<'a> IntoFuture for SampleRequest<'a> {
    type Output = Result<CreateMessageResult, ClientError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            self.ctx.require(&["sampling"], "sampling")?;
            if !self.params.tools.is_empty() {
                self.ctx.require(&["sampling", "tools"], "sampling.tools")?;
            }
            let answer = self
                .ctx
                .request_client("sampling/createMessage", &self.params, self.timeout)
                .await?;
            read_answer("sampling/createMessage", answer)
        })
    }
}
