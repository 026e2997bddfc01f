//! Servers composed from other servers: [`Mount`].

use std::sync::Arc;

use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::types::{Prompt, ResourceInfo, ResourceTemplateInfo, Tool};
use super::{Client, ClientError, Forward, RequestOptions};
use crate::completion::{Completion, CompletionContext};
use crate::content::{CallToolResult, ResourceContents};
use crate::context::Context;
use crate::dynamic::{DynamicPrompt, DynamicResource, DynamicTool, PromptArgument};
use crate::prompt::{GetPromptResult, PromptArguments};
use crate::protocol::{RpcError, ToolAnnotations};
use crate::registry::{DynamicCompleter, ResourceRequest};
use crate::server::Server;

/// Another server's catalogue, fetched, ready to mount into a server under a prefix with
/// [`ServerBuilder::mount`](crate::ServerBuilder::mount): one server made of several, each
/// in the same process or at the other end of a client (a proxy).
///
/// A mounted server's tools and prompts are listed as `{prefix}_{name}`, its resources and
/// templates under their own URIs; calls, reads, gets and completions go to it, with their
/// progress and cancellation; its requests made during a call (sampling, elicitation,
/// roots) go to the client of that call; its list changes change this server's lists, and
/// its resource updates reach this server's subscribers. A name or URI two servers share is
/// refused when the server is built.
///
/// ```
/// use mcp_runtime::client::Mount;
/// use mcp_runtime::prelude::*;
///
/// /// Tomorrow's weather in a city.
/// #[tool]
/// fn forecast(city: String) -> String {
///     format!("sunny in {city}")
/// }
///
/// # #[mcp_runtime::main]
/// # async fn main() {
/// let weather = mcp_runtime::server!()
///     .auto_register(false)
///     .tools(mcp_runtime::tools![forecast])
///     .build()
///     .unwrap();
/// let mount = Mount::in_process("weather", &weather).await.unwrap();
/// let gateway = mcp_runtime::server!()
///     .auto_register(false)
///     .mount(mount)
///     .build()
///     .unwrap();
/// let client = gateway.connect_memory();
/// client.initialize().await.unwrap();
/// let sunny = client
///     .call_tool("weather_forecast", serde_json::json!({ "city": "Oslo" }))
///     .await
///     .unwrap();
/// assert_eq!(sunny.content, vec![Content::text("sunny in Oslo")]);
/// # }
/// ```
pub struct Mount {
    prefix: String,
    client: Client,
    listed: Listed,
}

impl std::fmt::Debug for Mount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mount")
            .field("prefix", &self.prefix)
            .field("tools", &self.listed.tools.len())
            .field("prompts", &self.listed.prompts.len())
            .field("resources", &self.listed.resources.len())
            .field("templates", &self.listed.templates.len())
            .finish_non_exhaustive()
    }
}

/// What a mounted server lists.
#[derive(Clone, Default)]
struct Listed {
    tools: Vec<Tool>,
    prompts: Vec<Prompt>,
    resources: Vec<ResourceInfo>,
    templates: Vec<ResourceTemplateInfo>,
}

impl Listed {
    async fn fetch(client: &Client) -> Result<Listed, ClientError> {
        let server = client.server();
        let mut listed = Listed::default();
        if server.has("tools") {
            listed.tools = client.all_tools().await?;
        }
        if server.has("prompts") {
            listed.prompts = client.all_prompts().await?;
        }
        if server.has("resources") {
            listed.resources = client.all_resources().await?;
            listed.templates = client.all_resource_templates().await?;
        }
        Ok(listed)
    }
}

impl Mount {
    /// Mounts the server `client` is connected to, under `prefix`: its whole catalogue is
    /// fetched now (every page). The server sees the capabilities `client` declares: build it
    /// with [`ClientBuilder::proxy`](super::ClientBuilder::proxy) for the requests of the
    /// mounted server to reach this server's clients.
    pub async fn new(prefix: impl Into<String>, client: Client) -> Result<Mount, ClientError> {
        let prefix = prefix.into();
        let valid = !prefix.is_empty()
            && prefix.len() <= 64
            && prefix
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.');
        if !valid {
            return Err(ClientError::Usage(format!(
                "the prefix `{prefix}` must be 1 to 64 letters, digits, `-` or `.` (it starts tool names: `{prefix}_name`)"
            )));
        }
        let listed = Listed::fetch(&client).await?;
        Ok(Mount {
            prefix,
            client,
            listed,
        })
    }

    /// Mounts a server built in this program (no process, no socket: the dispatch every
    /// transport shares).
    pub async fn in_process(
        prefix: impl Into<String>,
        server: &Server,
    ) -> Result<Mount, ClientError> {
        let client = Client::builder().proxy().in_process(server).await?;
        Mount::new(prefix, client).await
    }

    /// Mounts the server at `target`: a URL, or a command line run as a child process.
    pub async fn connect(prefix: impl Into<String>, target: &str) -> Result<Mount, ClientError> {
        let client = Client::builder().proxy().connect(target).await?;
        Mount::new(prefix, client).await
    }

    /// The prefix its tools and prompts are listed under.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The client connected to the mounted server.
    pub fn client(&self) -> &Client {
        &self.client
    }

    fn origin(&self) -> String {
        format!("the server mounted as `{}`", self.prefix)
    }

    /// The items this server lists for the mounted one.
    pub(crate) fn items(&self) -> (Vec<DynamicTool>, Vec<DynamicPrompt>, Vec<DynamicResource>) {
        let tools = self.listed.tools.iter().map(|t| self.tool(t)).collect();
        let prompts = self.listed.prompts.iter().map(|p| self.prompt(p)).collect();
        let mut resources: Vec<DynamicResource> = self
            .listed
            .resources
            .iter()
            .map(|r| {
                let mut resource = self.resource(&r.uri, &r.name, r.description.as_deref());
                if let Some(mime) = &r.mime_type {
                    resource = resource.mime_type(mime);
                }
                resource
            })
            .collect();
        for template in &self.listed.templates {
            let mut resource = self.resource(
                &template.uri_template,
                &template.name,
                template.description.as_deref(),
            );
            if let Some(mime) = &template.mime_type {
                resource = resource.mime_type(mime);
            }
            let reference = json!({ "type": "ref/resource", "uri": template.uri_template });
            resources.push(resource.with_completer(completer(self.client.clone(), reference)));
        }
        (tools, prompts, resources)
    }

    fn tool(&self, tool: &Tool) -> DynamicTool {
        let client = self.client.clone();
        let remote = tool.name.clone();
        let mut dynamic = DynamicTool::new(
            format!("{}_{}", self.prefix, tool.name),
            tool.description.clone().unwrap_or_default(),
            tool.input_schema.clone(),
            move |ctx: Context, arguments: Value| {
                let (client, remote) = (client.clone(), remote.clone());
                async move { call_tool(&client, &remote, arguments, &ctx).await }
            },
        )
        .with_origin(self.origin());
        if let Some(title) = &tool.title {
            dynamic = dynamic.title(title);
        }
        if let Some(annotations) = tool
            .annotations
            .clone()
            .and_then(|a| serde_json::from_value::<ToolAnnotations>(a).ok())
        {
            dynamic = dynamic.annotations(annotations);
        }
        dynamic
    }

    fn prompt(&self, prompt: &Prompt) -> DynamicPrompt {
        let client = self.client.clone();
        let remote = prompt.name.clone();
        let arguments = prompt
            .arguments
            .iter()
            .map(|a| {
                let description = a.description.clone().unwrap_or_default();
                if a.required {
                    PromptArgument::required(&a.name, description)
                } else {
                    PromptArgument::optional(&a.name, description)
                }
            })
            .collect();
        let reference = json!({ "type": "ref/prompt", "name": prompt.name });
        DynamicPrompt::new(
            format!("{}_{}", self.prefix, prompt.name),
            prompt.description.clone().unwrap_or_default(),
            arguments,
            move |_ctx: Context, arguments: PromptArguments| {
                let (client, remote) = (client.clone(), remote.clone());
                async move { get_prompt(&client, &remote, &arguments).await }
            },
        )
        .with_completer(completer(self.client.clone(), reference))
        .with_origin(self.origin())
    }

    fn resource(&self, uri: &str, name: &str, description: Option<&str>) -> DynamicResource {
        let client = self.client.clone();
        DynamicResource::new(
            uri,
            name,
            description.unwrap_or_default(),
            move |_ctx: Context, request: ResourceRequest| {
                let client = client.clone();
                async move { read(&client, &request.uri).await }
            },
        )
        .with_origin(self.origin())
    }

    /// After the server is built: keeps its lists in step with the mounted server's, and
    /// passes the mounted server's resource updates on to its subscribers.
    pub(crate) fn follow(self, server: &Server) {
        if tokio::runtime::Handle::try_current().is_err() {
            tracing::warn!(
                prefix = self.prefix,
                "a server with a mount was built outside a Tokio runtime: its lists will not follow the mounted server's changes"
            );
            return;
        }
        let server = server.clone();
        tokio::spawn(async move {
            let mut notifications = self.client.notifications();
            let _listening = self.ask_for_changes().await;
            let mut mount = self;
            while let Some(notification) = notifications.next().await {
                match notification.method.as_str() {
                    "notifications/tools/list_changed"
                    | "notifications/prompts/list_changed"
                    | "notifications/resources/list_changed" => {
                        mount.refresh(&server).await;
                    }
                    "notifications/resources/updated" => {
                        if let Some(uri) = notification.params["uri"].as_str() {
                            server.notify_resource_updated(uri);
                        }
                    }
                    "notifications/message" => {
                        tracing::info!(
                            prefix = mount.prefix,
                            message = %notification.params,
                            "log message of a mounted server"
                        );
                    }
                    _ => {}
                }
            }
        });
    }

    /// Asks the mounted server for its list changes and its resources' updates: subscribes
    /// to each resource in the handshake era (list changes need no asking there), listens
    /// in the stateless one.
    async fn ask_for_changes(&self) -> Option<super::Listening> {
        let uris: Vec<&str> = self
            .listed
            .resources
            .iter()
            .map(|r| r.uri.as_str())
            .collect();
        let capability = |kind: &str, flag: &str| {
            self.client
                .server()
                .capabilities
                .get(kind)
                .and_then(|c| c.get(flag))
                == Some(&Value::Bool(true))
        };
        if self.client.server().stateless {
            let filter = json!({
                "toolsListChanged": capability("tools", "listChanged"),
                "promptsListChanged": capability("prompts", "listChanged"),
                "resourcesListChanged": capability("resources", "listChanged"),
                "resourceSubscriptions": if capability("resources", "subscribe") { uris } else { Vec::new() },
            });
            return match self.client.listen(filter).await {
                Ok(listening) => Some(listening),
                Err(error) => {
                    tracing::warn!(prefix = self.prefix, %error, "the mounted server's changes will not be followed");
                    None
                }
            };
        }
        if capability("resources", "subscribe") {
            for uri in uris {
                if let Err(error) = self.client.subscribe(uri).await {
                    tracing::debug!(%error, uri, "no subscription to a mounted resource");
                }
            }
        }
        None
    }

    /// Fetches the mounted server's lists again and replaces its items in `server`.
    async fn refresh(&mut self, server: &Server) {
        let listed = match Listed::fetch(&self.client).await {
            Ok(listed) => listed,
            Err(error) => {
                tracing::warn!(prefix = self.prefix, %error, "the mounted server's lists could not be fetched again");
                return;
            }
        };
        for tool in &self.listed.tools {
            server.remove_tool(&format!("{}_{}", self.prefix, tool.name));
        }
        for prompt in &self.listed.prompts {
            server.remove_prompt(&format!("{}_{}", self.prefix, prompt.name));
        }
        for resource in &self.listed.resources {
            server.remove_resource(&resource.uri);
        }
        for template in &self.listed.templates {
            server.remove_resource(&template.uri_template);
        }
        self.listed = listed;
        let (tools, prompts, resources) = self.items();
        let problems = tools
            .into_iter()
            .map(|t| server.add_dynamic_tool(t))
            .chain(prompts.into_iter().map(|p| server.add_dynamic_prompt(p)))
            .chain(
                resources
                    .into_iter()
                    .map(|r| server.add_dynamic_resource(r)),
            )
            .filter_map(Result::err);
        for problem in problems {
            tracing::warn!(prefix = self.prefix, %problem, "an item of the mounted server is left out");
        }
    }
}

/// Answers the mounted server's requests made during a call through the client of that
/// call.
fn forwarder(ctx: &Context) -> Forward {
    let ctx = ctx.clone();
    Arc::new(move |method, params| {
        let ctx = ctx.clone();
        Box::pin(async move { ctx.forward_client_request(&method, params).await })
    })
}

/// Calls the mounted server's tool for the call `ctx` is about: its progress and its
/// requests are passed on, its cancellation passed down.
async fn call_tool(
    client: &Client,
    remote: &str,
    arguments: Value,
    ctx: &Context,
) -> CallToolResult {
    let (progress, mut reports) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let mut options = RequestOptions::default()
        .with_progress(progress)
        .with_cancel(cancel.clone());
    options.forward = Some(forwarder(ctx));
    let call = client.call_tool_with(remote, arguments, &options);
    tokio::pin!(call);
    let outcome = loop {
        tokio::select! {
            outcome = &mut call => break outcome,
            Some(report) = reports.recv() => {
                ctx.progress(report.progress, report.total, report.message).await;
            }
            () = ctx.cancelled(), if !cancel.is_cancelled() => cancel.cancel(),
        }
    };
    // Reports that came just before the answer.
    while let Ok(report) = reports.try_recv() {
        ctx.progress(report.progress, report.total, report.message)
            .await;
    }
    match outcome {
        Ok(result) => CallToolResult {
            content: result.contents(),
            structured_content: result.structured_content,
            is_error: result.is_error,
            meta: result
                .extra
                .get("_meta")
                .and_then(Value::as_object)
                .cloned(),
            ..CallToolResult::default()
        },
        // The mounted server refused the call: the model reads why.
        Err(ClientError::Rpc(error)) => CallToolResult::error(error.message),
        Err(error) => CallToolResult::protocol_error(format!(
            "the mounted server could not be reached: {error}"
        )),
    }
}

async fn get_prompt(
    client: &Client,
    remote: &str,
    arguments: &PromptArguments,
) -> Result<GetPromptResult, String> {
    let arguments: Map<String, Value> = arguments
        .values()
        .map(|(name, value)| (name.to_owned(), Value::String(value.to_owned())))
        .collect();
    let result = client
        .get_prompt(remote, arguments)
        .await
        .map_err(|e| e.to_string())?;
    let value = json!({ "description": result.description, "messages": result.messages });
    serde_json::from_value(value)
        .map_err(|e| format!("the mounted server's prompt is not one this server can send: {e}"))
}

async fn read(client: &Client, uri: &str) -> Result<Vec<ResourceContents>, String> {
    let result = client.read_resource(uri).await.map_err(|e| e.to_string())?;
    result
        .contents
        .into_iter()
        .map(serde_json::from_value)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("the mounted server's contents are malformed: {e}"))
}

/// Completes an argument of `reference` (a prompt or template of the mounted server) there.
fn completer(client: Client, reference: Value) -> DynamicCompleter {
    Arc::new(move |_ctx, context: CompletionContext| {
        let (client, reference) = (client.clone(), reference.clone());
        Box::pin(async move {
            let arguments: Map<String, Value> = context
                .arguments
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect();
            let completion = client
                .complete(
                    reference,
                    &context.argument,
                    &context.value,
                    (!arguments.is_empty()).then_some(arguments),
                )
                .await
                .map_err(|error| match error {
                    ClientError::Rpc(error) => error,
                    other => RpcError::internal(other.to_string()),
                })?;
            Ok(Completion {
                values: completion.values,
                total: completion.total,
                has_more: completion.has_more,
            })
        })
    })
}
