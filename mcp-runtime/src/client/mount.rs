//! Servers composed from other servers: [`Mount`].

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::types::{PromptInfo, ResourceInfo, ResourceTemplateInfo, ToolInfo};
use super::{CallError, Client, Forward, RequestOptions};
use crate::completion::{Completion, CompletionContext};
use crate::content::{CallToolResult, ResourceContents};
use crate::context::Context;
use crate::dynamic::{DynamicPrompt, DynamicResource, DynamicTool, PromptArgument};
use crate::prompt::{GetPromptResult, PromptArguments};
use crate::protocol::{RpcError, ToolAnnotations};
use crate::registry::{DynamicCompleter, ResourceRequest};
use crate::server::Server;

/// How many of a mounted call's progress reports wait to be passed on to the caller; the
/// reports that come while this many wait are dropped, not held: a mounted server that sends
/// reports faster than they are passed on costs no more than this.
const MOUNTED_PROGRESS_QUEUE: usize = 64;

/// The longest a mounted call may run (a day): the caller's cancellation or this server's own
/// tool timeout ends it sooner.
const MOUNTED_CALL_LIMIT: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// Another server's catalogue, fetched, ready to mount into a server under a prefix with
/// [`ServerBuilder::mount`](crate::ServerBuilder::mount): one server made of several, each
/// in the same process or at the other end of a client (a proxy).
///
/// A mounted server's tools and prompts are listed as `{prefix}_{name}`, its resources and
/// templates under their own URIs; calls, reads, gets and completions go to it (a call with
/// its progress and its cancellation); its requests made during a call (sampling,
/// elicitation, roots) go to the client of that call; its list changes change this server's lists, and
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
    /// The mounted server's notifications, heard from before its lists were fetched, so no
    /// change between the fetch and the server's start is missed.
    notifications: super::Notifications,
    /// The stateless era's `subscriptions/listen` for those changes, while it lasts.
    listening: Option<super::Listening>,
    /// The items of the mounted server that this server lists for it, by their names and
    /// URIs there: only these are removed or replaced when its lists change, and only the
    /// updates of these resources are passed on. An item left out because its name or URI
    /// is another's stays the other's.
    owned: Owned,
}

/// The keys of the items a mount added to the server: tool and prompt names as the mounted
/// server names them, resource URIs, template URIs.
#[derive(Default)]
struct Owned {
    tools: HashSet<String>,
    prompts: HashSet<String>,
    resources: HashSet<String>,
    templates: HashSet<String>,
}

impl Owned {
    /// Every item of `listed`: once the server is built, it holds them all (a clash fails
    /// the build).
    fn all(listed: &Listed) -> Owned {
        Owned {
            tools: listed.tools.iter().map(|t| t.name.clone()).collect(),
            prompts: listed.prompts.iter().map(|p| p.name.clone()).collect(),
            resources: listed.resources.iter().map(|r| r.uri.clone()).collect(),
            templates: listed
                .templates
                .iter()
                .map(|t| t.uri_template.clone())
                .collect(),
        }
    }

    /// Whether `uri` is one of the mount's resources: only their updates are passed on
    /// (a URI only a template matches may be another's resource).
    fn serves(&self, uri: &str) -> bool {
        self.resources.contains(uri)
    }
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
    tools: Vec<ToolInfo>,
    prompts: Vec<PromptInfo>,
    resources: Vec<ResourceInfo>,
    templates: Vec<ResourceTemplateInfo>,
}

impl Listed {
    async fn fetch(client: &Client) -> Result<Listed, CallError> {
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
    pub async fn new(prefix: impl Into<String>, client: Client) -> Result<Mount, CallError> {
        let prefix = prefix.into();
        let valid = !prefix.is_empty()
            && prefix.len() <= 64
            && prefix
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.');
        if !valid {
            return Err(CallError::Usage(format!(
                "the prefix `{prefix}` must be 1 to 64 letters, digits, `-` or `.` (it starts tool names: `{prefix}_name`)"
            )));
        }
        // Listening starts before the lists that count are fetched: a change after it is
        // heard, one before it is in the lists. (The first fetch names the resources to
        // follow.)
        let notifications = client.notifications();
        let first = Listed::fetch(&client).await?;
        let listening = ask_for_changes(&prefix, &client, &first, &[]).await;
        let listed = Listed::fetch(&client).await?;
        let mut mount = Mount {
            prefix,
            client,
            listed: Listed::default(),
            notifications,
            listening,
            owned: Owned::default(),
        };
        mount.listed = mount.without_invalid_names(listed);
        Ok(mount)
    }

    /// Mounts a server built in this program (no process, no socket: the dispatch every
    /// transport shares).
    pub async fn in_process(
        prefix: impl Into<String>,
        server: &Server,
    ) -> Result<Mount, CallError> {
        let client = Client::builder().proxy().in_process(server).await?;
        Mount::new(prefix, client).await
    }

    /// Mounts the server at `target`: a URL, or a command line run as a child process.
    pub async fn connect(prefix: impl Into<String>, target: &str) -> Result<Mount, CallError> {
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

    /// Leaves out, with a warning naming the mount and the name, each tool whose name under
    /// the prefix is refused ([`DynamicTool::check_name`]: this server lists it as its own),
    /// and each prompt whose name under the prefix breaks the same rule (prompts are listed
    /// as `{prefix}_{name}` too); and each whose own name is empty, since `{prefix}_` alone
    /// is a valid name but names nothing. Left out here, not when the server is built: a
    /// tool refused there fails the build, and a mounted server must not fail its gateway's.
    fn without_invalid_names(&self, mut listed: Listed) -> Listed {
        let keep = |kind: &str, name: &str, problem: Option<String>| {
            let Some(problem) = problem else {
                return true;
            };
            let shown = crate::dynamic::shown_name(name);
            tracing::warn!(
                prefix = self.prefix,
                name = ?shown,
                length = name.len(),
                %problem,
                "a {kind} of the mounted server is left out: its name under the prefix is not a tool name"
            );
            false
        };
        let empty = || Some("the mounted server names it with nothing".to_owned());
        listed.tools.retain(|tool| {
            let problem = if tool.name.is_empty() {
                empty()
            } else {
                self.tool(tool).check_name().err().map(|e| e.to_string())
            };
            keep("tool", &tool.name, problem)
        });
        listed.prompts.retain(|prompt| {
            let errors = crate::testing::tool_name_errors(&prompt.served_as(&self.prefix));
            let problem = if prompt.name.is_empty() {
                empty()
            } else {
                (!errors.is_empty()).then(|| errors.join("; "))
            };
            keep("prompt", &prompt.name, problem)
        });
        listed
    }

    /// The items this server lists for the mounted one.
    pub(crate) fn items(&self) -> (Vec<DynamicTool>, Vec<DynamicPrompt>, Vec<DynamicResource>) {
        let tools = self.listed.tools.iter().map(|t| self.tool(t)).collect();
        let prompts = self.listed.prompts.iter().map(|p| self.prompt(p)).collect();
        let mut resources: Vec<DynamicResource> = self
            .listed
            .resources
            .iter()
            .map(|r| self.listed_resource(r))
            .collect();
        resources.extend(self.listed.templates.iter().map(|t| self.template(t)));
        (tools, prompts, resources)
    }

    fn tool(&self, tool: &ToolInfo) -> DynamicTool {
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

    fn prompt(&self, prompt: &PromptInfo) -> DynamicPrompt {
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

    fn listed_resource(&self, listed: &ResourceInfo) -> DynamicResource {
        let resource = self.resource(&listed.uri, &listed.name, listed.description.as_deref());
        match &listed.mime_type {
            Some(mime) => resource.mime_type(mime),
            None => resource,
        }
    }

    fn template(&self, template: &ResourceTemplateInfo) -> DynamicResource {
        let mut resource = self.resource(
            &template.uri_template,
            &template.name,
            template.description.as_deref(),
        );
        if let Some(mime) = &template.mime_type {
            resource = resource.mime_type(mime);
        }
        let reference = json!({ "type": "ref/resource", "uri": template.uri_template });
        resource.with_completer(completer(self.client.clone(), reference))
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
        let mut mount = self;
        mount.owned = Owned::all(&mount.listed);
        tokio::spawn(async move {
            while let Some(notification) = mount.notifications.next().await {
                match notification.method.as_str() {
                    "notifications/tools/list_changed"
                    | "notifications/prompts/list_changed"
                    | "notifications/resources/list_changed" => {
                        mount.refresh(&server).await;
                    }
                    "notifications/resources/updated" => {
                        match notification.params["uri"].as_str() {
                            Some(uri) if mount.owned.serves(uri) => {
                                server.notify_resource_updated(uri)
                            }
                            Some(uri) => tracing::debug!(
                                prefix = mount.prefix,
                                uri,
                                "an update of a resource the mounted server does not serve here is dropped"
                            ),
                            None => {}
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

    /// Fetches the mounted server's lists again and changes in `server` only the items
    /// that changed (an item the gateway disabled stays disabled while it is unchanged).
    async fn refresh(&mut self, server: &Server) {
        let listed = match Listed::fetch(&self.client).await {
            Ok(listed) => self.without_invalid_names(listed),
            Err(error) => {
                tracing::warn!(prefix = self.prefix, %error, "the mounted server's lists could not be fetched again");
                return;
            }
        };
        let old = std::mem::replace(&mut self.listed, listed);
        let mut owned = std::mem::take(&mut self.owned);
        let mut problems = Vec::new();
        let new = &self.listed;
        self.follow_changes(
            &old.tools,
            &new.tools,
            &mut owned.tools,
            server,
            &mut problems,
        );
        self.follow_changes(
            &old.prompts,
            &new.prompts,
            &mut owned.prompts,
            server,
            &mut problems,
        );
        self.follow_changes(
            &old.resources,
            &new.resources,
            &mut owned.resources,
            server,
            &mut problems,
        );
        self.follow_changes(
            &old.templates,
            &new.templates,
            &mut owned.templates,
            server,
            &mut problems,
        );
        self.owned = owned;
        for (problem, served_before) in problems {
            let what = if served_before {
                "a change of the mounted server is refused: the version served before stays"
            } else {
                "an item of the mounted server is left out"
            };
            if matches!(problem, crate::CatalogueError::MadeTextLimit { .. }) {
                tracing::error!(prefix = self.prefix, %problem, "{what}");
            } else {
                tracing::warn!(prefix = self.prefix, %problem, "{what}");
            }
        }
        // New resources are followed too.
        if let Some(listening) =
            ask_for_changes(&self.prefix, &self.client, &self.listed, &old.resources).await
        {
            self.listening = Some(listening);
        }
    }
}

impl Mount {
    /// Brings one of `server`'s lists in step with the mounted server's, from `old` to `new`:
    /// an item gone or changed is removed if the mount added it (`owned`), one new or changed
    /// is added and then owned. Each new or changed item is built first, as `server` builds
    /// it, before anything is removed: one refused then (its name, its schema, the bound on
    /// the text kept for items made at run time) is a problem, and the version served
    /// before, if any, stays. One refused when added (its name or URI is another's) is a
    /// problem, and stays the other's. Each problem comes with whether a version of the
    /// item stays served.
    fn follow_changes<T: Listing>(
        &self,
        old: &[T],
        new: &[T],
        owned: &mut HashSet<String>,
        server: &Server,
        problems: &mut Vec<(crate::CatalogueError, bool)>,
    ) {
        let mut made = Vec::new();
        let mut refused = HashSet::new();
        for item in changed(new, old) {
            let one = item.made(self);
            match one.check(server) {
                Ok(()) => made.push((item, one)),
                Err(problem) => {
                    refused.insert(item.key());
                    problems.push((problem, owned.contains(item.key())));
                }
            }
        }
        for item in changed(old, new) {
            if !refused.contains(item.key()) && owned.remove(item.key()) {
                T::Made::remove_from(server, &item.served_as(&self.prefix));
            }
        }
        for (item, one) in made {
            match one.add_to(server) {
                Ok(()) => {
                    owned.insert(item.key().clone());
                }
                Err(problem) => problems.push((problem, false)),
            }
        }
    }
}

/// A kind of item a mounted server lists, as the gateway follows its changes.
trait Listing: PartialEq {
    /// What the gateway serves for it.
    type Made: Made;
    /// Its name there (a tool's, a prompt's), or its URI (a resource's, a template's).
    fn key(&self) -> &String;
    /// The name or URI the gateway serves it under.
    fn served_as(&self, prefix: &str) -> String;
    /// What the gateway serves for it.
    fn made(&self, mount: &Mount) -> Self::Made;
}

impl Listing for ToolInfo {
    type Made = DynamicTool;
    fn key(&self) -> &String {
        &self.name
    }
    fn served_as(&self, prefix: &str) -> String {
        format!("{prefix}_{}", self.name)
    }
    fn made(&self, mount: &Mount) -> DynamicTool {
        mount.tool(self)
    }
}

impl Listing for PromptInfo {
    type Made = DynamicPrompt;
    fn key(&self) -> &String {
        &self.name
    }
    fn served_as(&self, prefix: &str) -> String {
        format!("{prefix}_{}", self.name)
    }
    fn made(&self, mount: &Mount) -> DynamicPrompt {
        mount.prompt(self)
    }
}

impl Listing for ResourceInfo {
    type Made = DynamicResource;
    fn key(&self) -> &String {
        &self.uri
    }
    fn served_as(&self, _prefix: &str) -> String {
        self.uri.clone()
    }
    fn made(&self, mount: &Mount) -> DynamicResource {
        mount.listed_resource(self)
    }
}

impl Listing for ResourceTemplateInfo {
    type Made = DynamicResource;
    fn key(&self) -> &String {
        &self.uri_template
    }
    fn served_as(&self, _prefix: &str) -> String {
        self.uri_template.clone()
    }
    fn made(&self, mount: &Mount) -> DynamicResource {
        mount.template(self)
    }
}

/// An item made at run time, as a running server adds and removes it.
trait Made: Sized {
    /// Builds the item as `server` does when it is added, without adding it (its descriptor,
    /// made once, is the one the addition then finds).
    fn check(&self, server: &Server) -> Result<(), crate::CatalogueError>;
    fn add_to(self, server: &Server) -> Result<(), crate::CatalogueError>;
    /// Removes the item served as `served`; returns whether it was there.
    fn remove_from(server: &Server, served: &str) -> bool;
}

impl Made for DynamicTool {
    fn check(&self, server: &Server) -> Result<(), crate::CatalogueError> {
        let profiles = server.schema_profiles();
        self.build(profiles.get(profiles.base_slot())).map(drop)
    }
    fn add_to(self, server: &Server) -> Result<(), crate::CatalogueError> {
        server.add_dynamic_tool(self)
    }
    fn remove_from(server: &Server, served: &str) -> bool {
        server.remove_tool(served)
    }
}

impl Made for DynamicPrompt {
    fn check(&self, _server: &Server) -> Result<(), crate::CatalogueError> {
        self.build().map(drop)
    }
    fn add_to(self, server: &Server) -> Result<(), crate::CatalogueError> {
        server.add_dynamic_prompt(self)
    }
    fn remove_from(server: &Server, served: &str) -> bool {
        server.remove_prompt(served)
    }
}

impl Made for DynamicResource {
    fn check(&self, _server: &Server) -> Result<(), crate::CatalogueError> {
        self.build().map(drop)
    }
    fn add_to(self, server: &Server) -> Result<(), crate::CatalogueError> {
        server.add_dynamic_resource(self)
    }
    fn remove_from(server: &Server, served: &str) -> bool {
        server.remove_resource(served)
    }
}

/// The items of `from` that `other` does not have as they are (gone, or changed).
fn changed<'a, T: Listing>(from: &'a [T], other: &'a [T]) -> impl Iterator<Item = &'a T> {
    from.iter()
        .filter(move |item| !other.iter().any(|o| o.key() == item.key() && o == *item))
}

/// Asks the mounted server for its list changes and for the updates of the resources in
/// `listed` not in `already`: subscribes to each in the handshake era (list changes need no
/// asking there), listens in the stateless one (a new listen replaces the old).
async fn ask_for_changes(
    prefix: &str,
    client: &Client,
    listed: &Listed,
    already: &[ResourceInfo],
) -> Option<super::Listening> {
    let uris: Vec<&str> = listed.resources.iter().map(|r| r.uri.as_str()).collect();
    let capability = |kind: &str, flag: &str| {
        client
            .server()
            .capabilities
            .get(kind)
            .and_then(|c| c.get(flag))
            == Some(&Value::Bool(true))
    };
    if client.server().stateless {
        let filter = json!({
            "toolsListChanged": capability("tools", "listChanged"),
            "promptsListChanged": capability("prompts", "listChanged"),
            "resourcesListChanged": capability("resources", "listChanged"),
            "resourceSubscriptions": if capability("resources", "subscribe") { uris } else { Vec::new() },
        });
        return match client.listen(filter).await {
            Ok(listening) => Some(listening),
            Err(error) => {
                tracing::warn!(prefix, %error, "the mounted server's changes will not be followed");
                None
            }
        };
    }
    if capability("resources", "subscribe") {
        for uri in uris {
            if already.iter().any(|r| r.uri == uri) {
                continue;
            }
            if let Err(error) = client.subscribe(uri).await {
                tracing::debug!(%error, uri, "no subscription to a mounted resource");
            }
        }
    }
    None
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
    let (progress, mut reports) = mpsc::channel(MOUNTED_PROGRESS_QUEUE);
    let cancel = CancellationToken::new();
    // The call lasts as long as the caller waits: its cancellation (or this server's tool
    // timeout) ends it, not the client's default timeout.
    let mut options = RequestOptions::timeout(MOUNTED_CALL_LIMIT)
        .with_progress(progress)
        .with_cancel(cancel.clone());
    options.forward = Some(forwarder(ctx));
    let call = client.call_tool_with(remote, arguments, &options);
    tokio::pin!(call);
    let outcome = {
        // Reports are passed on beside the call, never in its place: once the caller is
        // gone `ctx.progress` never returns, and the call must still be polled and its
        // cancellation passed down.
        let passing = async {
            while let Some(report) = reports.recv().await {
                ctx.progress(report.progress, report.total, report.message)
                    .await;
            }
            // `options` holds a sender until the call ends: not reached before.
            std::future::pending::<()>().await;
        };
        tokio::pin!(passing);
        loop {
            tokio::select! {
                outcome = &mut call => break outcome,
                () = &mut passing => {}
                () = ctx.cancelled(), if !cancel.is_cancelled() => cancel.cancel(),
            }
        }
    };
    // Reports that came just before the answer, unless the caller is gone.
    while let Ok(report) = reports.try_recv() {
        tokio::select! {
            () = ctx.progress(report.progress, report.total, report.message) => {}
            () = ctx.cancelled() => break,
        }
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
        Err(CallError::Rpc(error)) => CallToolResult::error(error.message),
        Err(error) => CallToolResult::protocol_error(format!(
            "the mounted server could not be reached: {error}"
        )),
    }
}

async fn get_prompt(
    client: &Client,
    remote: &str,
    arguments: &PromptArguments,
) -> Result<GetPromptResult, RpcError> {
    let arguments: Map<String, Value> = arguments
        .values()
        .map(|(name, value)| (name.to_owned(), Value::String(value.to_owned())))
        .collect();
    let result = client
        .get_prompt(remote, arguments)
        .await
        .map_err(upstream_error)?;
    let value = json!({ "description": result.description, "messages": result.messages });
    serde_json::from_value(value).map_err(|e| {
        RpcError::internal(format!(
            "the mounted server's prompt is not one this server can send: {e}"
        ))
    })
}

async fn read(client: &Client, uri: &str) -> Result<Vec<ResourceContents>, RpcError> {
    let result = client.read_resource(uri).await.map_err(upstream_error)?;
    result
        .contents
        .into_iter()
        .map(serde_json::from_value)
        .collect::<Result<_, _>>()
        .map_err(|e| {
            RpcError::internal(format!("the mounted server's contents are malformed: {e}"))
        })
}

/// The mounted server's JSON-RPC error as it is (its code, its data); a failure to reach it
/// as an internal error.
fn upstream_error(error: CallError) -> RpcError {
    match error {
        CallError::Rpc(error) => error,
        other => RpcError::internal(format!("the mounted server could not be reached: {other}")),
    }
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
                .map_err(upstream_error)?;
            Ok(Completion {
                values: completion.values,
                total: completion.total,
                has_more: completion.has_more,
            })
        })
    })
}
