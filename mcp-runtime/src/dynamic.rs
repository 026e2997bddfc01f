//! Tools, prompts and resources that are not known at compile time (feature `dynamic`): made
//! at run time from a name, a description, a JSON Schema (a prompt's argument list, a
//! resource's URI template) and an async closure — from configuration, an OpenAPI document,
//! a database.
//!
//! The schema is checked when the tool is registered: it must describe an object, be a valid
//! JSON Schema, and be something the server's schema profile can send; a tool that is not
//! is refused with the reason. A call's arguments are validated against the schema before
//! the closure runs, and a mismatch is the same tool error a `#[tool]` function gives
//! (`invalid arguments: …`), which a model can read and correct.
//!
//! ```
//! use mcp_runtime::prelude::*;
//! use mcp_runtime::DynamicTool;
//! use serde_json::{Value, json};
//!
//! # #[mcp_runtime::main]
//! # async fn main() {
//! let greet = DynamicTool::new(
//!     "greet",
//!     "Greet someone by name.",
//!     json!({
//!         "type": "object",
//!         "properties": {"name": {"type": "string", "minLength": 1}},
//!         "required": ["name"],
//!         "additionalProperties": false,
//!     }),
//!     |_ctx: Context, arguments: Value| async move {
//!         format!("Hello, {}!", arguments["name"].as_str().unwrap_or_default())
//!     },
//! );
//! let server = mcp_runtime::server!()
//!     .auto_register(false)
//!     .dynamic_tool(greet)
//!     .build()
//!     .unwrap();
//! let client = server.connect_memory();
//! client.initialize().await.unwrap();
//! let ok = client.call_tool("greet", json!({"name": "Ada"})).await.unwrap();
//! assert_eq!(ok.content, vec![Content::text("Hello, Ada!")]);
//! let refused = client.call_tool("greet", json!({"name": 7})).await.unwrap();
//! assert!(refused.is_error);
//! # }
//! ```

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use crate::content::{CallToolResult, IntoToolResult};
use crate::context::Context;
use crate::prompt::{IntoPromptResult, PromptArguments};
use crate::protocol::RpcError;
use crate::protocol::ToolAnnotations;
use crate::registry::{
    CatalogueError, CataloguePrompt, CatalogueResource, CatalogueTool, DynamicHandler,
    DynamicPromptHandler, DynamicResourceHandler, PromptArgumentDescriptor, PromptDescriptor,
    ResourceDescriptor, ResourceRequest, SourceLocation, ToolDescriptor,
};
use crate::resource::IntoResourceContents;
use crate::schema::SchemaProfile;

/// A name as a refusal or a warning shows it: its first 200 characters, so that a name of a
/// hundred thousand does not make one of a log line or an error.
pub(crate) fn shown_name(name: &str) -> String {
    name.chars().take(200).collect()
}
/// The future a dynamic tool's closure returns, boxed.
type Call = std::pin::Pin<Box<dyn Future<Output = CallToolResult> + Send>>;

/// A tool made at run time. Register it with
/// [`ServerBuilder::dynamic_tool`](crate::ServerBuilder::dynamic_tool), or add it to a
/// running server with [`Server::add_dynamic_tool`](crate::Server::add_dynamic_tool).
#[derive(Clone)]
pub struct DynamicTool {
    name: String,
    title: Option<String>,
    description: String,
    schema: Value,
    annotations: ToolAnnotations,
    call: Arc<dyn Fn(Context, Value) -> Call + Send + Sync>,
    /// Where it comes from, for error messages (a mounted server's, or made at run time).
    origin: Option<String>,
}

impl DynamicTool {
    /// A tool named `name`, described for the model by `description`, whose arguments are
    /// described by `schema` (an object schema), answering with what `call` returns (any
    /// tool result: text, `Json<T>`, `Result<T, E>`, …).
    pub fn new<F, Fut, R>(
        name: impl Into<String>,
        description: impl Into<String>,
        schema: Value,
        call: F,
    ) -> DynamicTool
    where
        F: Fn(Context, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoToolResult,
    {
        DynamicTool {
            name: name.into(),
            title: None,
            description: description.into(),
            schema,
            annotations: ToolAnnotations::default(),
            call: Arc::new(move |ctx, arguments| {
                let call = call(ctx, arguments);
                Box::pin(async move { call.await.into_tool_result() })
            }),
            origin: None,
        }
    }

    /// Names where the tool comes from in error messages (`the server mounted as …`).
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn with_origin(mut self, origin: String) -> Self {
        self.origin = Some(origin);
        self
    }

    /// A title for people.
    pub fn title(mut self, title: impl Into<String>) -> DynamicTool {
        self.title = Some(title.into());
        self
    }

    /// Behaviour hints (`read_only`, `destructive`, …), as `#[tool(annotations(…))]` gives.
    pub fn annotations(mut self, annotations: ToolAnnotations) -> DynamicTool {
        self.annotations = annotations;
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Refuses a name that is not a tool name (the rule
    /// [`lint_schemas`](crate::testing::lint_schemas) applies): a client must never be handed
    /// an empty name, a newline or a name of a hundred thousand characters.
    pub(crate) fn check_name(&self) -> Result<(), CatalogueError> {
        let errors = crate::testing::tool_name_errors(&self.name);
        if errors.is_empty() {
            return Ok(());
        }
        Err(self.refusal(format!(
            "its name is not a tool name: {}",
            errors.join("; ")
        )))
    }

    /// The refusal of the tool, for `problem`.
    fn refusal(&self, problem: String) -> CatalogueError {
        CatalogueError::InvalidDynamicTool {
            name: shown_name(&self.name),
            problem,
        }
    }

    /// Checks the tool (its name, and its schema against `profile`) and makes its catalogue
    /// entry.
    pub(crate) fn build(&self, profile: &SchemaProfile) -> Result<CatalogueTool, CatalogueError> {
        self.check_name()?;
        let refuse = |problem: String| self.refusal(problem);
        if !crate::schema::is_object_schema(&self.schema) {
            return Err(refuse(
                "its schema must describe an object (`{\"type\": \"object\", \"properties\": {…}}`): a tool's arguments are named".into(),
            ));
        }
        let validator = jsonschema::validator_for(&self.schema)
            .map_err(|e| refuse(format!("its schema is not a valid JSON Schema: {e}")))?;
        let shaped = profile.shape_input(&self.schema);
        if let Some(problem) = profile
            .check(&shaped, crate::schema::Target::Input)
            .into_iter()
            .next()
        {
            return Err(refuse(format!(
                "the `{}` schema profile cannot send its schema: at `{}`, {}",
                profile.name(),
                if problem.pointer.is_empty() {
                    "/"
                } else {
                    &problem.pointer
                },
                problem.message
            )));
        }
        let descriptor = self.descriptor()?;
        let call = Arc::clone(&self.call);
        let validator = Arc::new(validator);
        let handler: DynamicHandler = Arc::new(move |ctx, arguments| {
            let arguments: Value = match arguments.parse() {
                Ok(arguments) => arguments,
                Err(refused) => return Box::pin(std::future::ready(refused)),
            };
            if let Some(problem) = validator.iter_errors(&arguments).next() {
                let path = problem.instance_path().to_string();
                let message = if path.is_empty() {
                    format!("invalid arguments: {problem}")
                } else {
                    format!(
                        "invalid arguments: `{}`: {problem}",
                        path.trim_start_matches('/')
                    )
                };
                return Box::pin(std::future::ready(CallToolResult::error(message)));
            }
            call(ctx, arguments)
        });
        CatalogueTool::build_with(descriptor, self.schema.clone(), Some(handler))
    }

    /// The tool's descriptor, made once for the life of the process (see [`made_once`]).
    fn descriptor(&self) -> Result<&'static ToolDescriptor, CatalogueError> {
        let key = serde_json::json!([
            self.name,
            self.title,
            self.description,
            self.annotations,
            self.origin
        ]);
        let item = Counted {
            kind: "tool",
            name: &self.name,
            origin: self.origin.as_deref(),
            parts: 0,
        };
        made_once(key, item, || {
            ToolDescriptor {
                name: leak(&self.name),
                title: self.title.as_deref().map(leak),
                description: Some(leak(&self.description)),
                annotations: self.annotations,
                icons: &[],
                meta: None,
                // The catalogue holds the schema and the call; these are never used.
                input_schema: || Value::Null,
                output_schema: || None,
                schema_profile: None,
                task: crate::tasks::TaskSupport::Never,
                timeout: None,
                call: |_, _| Box::pin(std::future::ready(CallToolResult::error("not callable"))),
                states: &[],
                scopes: &[],
                location: location(self.origin.as_deref()),
            }
        })
    }
}

impl std::fmt::Debug for DynamicTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicTool")
            .field("name", &self.name)
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

/// Where an item made at run time comes from.
fn location(origin: Option<&str>) -> SourceLocation {
    match origin {
        Some(origin) => SourceLocation {
            file: leak(origin),
            line: 0,
        },
        None => MADE_AT_RUN_TIME,
    }
}

/// The most bytes of names, descriptions and other text that the descriptors of items made
/// at run time keep, for the life of the process, all together (64 MiB). The descriptors
/// must be `'static` and are never freed, so a mounted server that changed a large
/// description again and again would otherwise grow the process without end.
pub(crate) const MADE_TEXT_LIMIT: usize = 64 * 1024 * 1024;

/// The most of [`MADE_TEXT_LIMIT`] that the items of one origin (one mounted server) keep
/// (16 MiB): a server that changes its tools without end stops its own changes, not those
/// of every other mount and of the program's own items.
pub(crate) const MADE_TEXT_LIMIT_PER_ORIGIN: usize = 16 * 1024 * 1024;

/// Descriptors are `'static` (every item's is, and the catalogue keeps them by address), so
/// each distinct one made at run time is made once and kept for the life of the process:
/// adding the same item again, or another with the same texts, reuses it. A new one past the
/// bounds on that text ([`MADE_TEXT_LIMIT`], [`MADE_TEXT_LIMIT_PER_ORIGIN`]) is refused.
///
/// Every descriptor made at run time, and the bytes they keep.
#[derive(Default)]
struct Made {
    descriptors: HashMap<(TypeId, String), &'static (dyn Any + Send + Sync)>,
    bytes: usize,
    /// The bytes of each origin's descriptors (a mounted server's), by origin.
    by_origin: HashMap<String, usize>,
}

impl Made {
    /// Counts `cost` more bytes, of `origin`'s items if it has one; past a bound, counts
    /// nothing and returns the bound passed.
    fn count(&mut self, cost: usize, origin: Option<&str>) -> Result<(), usize> {
        if self.bytes + cost > MADE_TEXT_LIMIT {
            return Err(MADE_TEXT_LIMIT);
        }
        if let Some(origin) = origin {
            let own = self.by_origin.get(origin).copied().unwrap_or(0);
            if own + cost > MADE_TEXT_LIMIT_PER_ORIGIN {
                return Err(MADE_TEXT_LIMIT_PER_ORIGIN);
            }
            *self.by_origin.entry(origin.to_owned()).or_default() += cost;
        }
        self.bytes += cost;
        Ok(())
    }
}

static MADE: OnceLock<Mutex<Made>> = OnceLock::new();

fn made() -> std::sync::MutexGuard<'static, Made> {
    MADE.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

/// The item a descriptor is made for, as [`made_once`] counts and names it.
struct Counted<'a> {
    /// `"tool"`, `"prompt"` or `"resource"`.
    kind: &'static str,
    /// Its name or URI.
    name: &'a str,
    /// Where it comes from (a mounted server), if not from the program itself.
    origin: Option<&'a str>,
    /// The bytes its descriptor keeps beyond its texts and itself (a prompt's arguments).
    parts: usize,
}

/// The descriptor made for `key` (each kind of descriptor keyed apart), made by `make` the
/// first time and kept for the life of the process (see [`Made`]); `item` is counted
/// against the bounds, and named in the refusal when a new descriptor would pass one.
fn made_once<D: Send + Sync + 'static>(
    key: Value,
    item: Counted<'_>,
    make: impl FnOnce() -> D,
) -> Result<&'static D, CatalogueError> {
    let Counted {
        kind,
        name,
        origin,
        parts,
    } = item;
    let key = (TypeId::of::<D>(), key.to_string());
    let mut made = made();
    let descriptor = match made.descriptors.get(&key) {
        Some(descriptor) => *descriptor,
        None => {
            // The key kept in the map, the descriptor's texts (all within the key), the
            // descriptor and its other parts.
            let cost = 2 * key.1.len() + std::mem::size_of::<D>() + parts;
            made.count(cost, origin)
                .map_err(|limit| CatalogueError::MadeTextLimit {
                    kind,
                    name: shown_name(name),
                    origin: origin.map(str::to_owned),
                    limit,
                })?;
            let descriptor: &'static (dyn Any + Send + Sync) = Box::leak(Box::new(make()));
            made.descriptors.insert(key, descriptor);
            descriptor
        }
    };
    Ok(descriptor
        .downcast_ref::<D>()
        .expect("each entry is of the type it is keyed by"))
}

/// Text made `'static` for a descriptor (made once per distinct descriptor: [`made_once`]).
fn leak(text: &str) -> &'static str {
    Box::leak(text.to_owned().into_boxed_str())
}

/// Where a descriptor of a run-time item says it is defined.
const MADE_AT_RUN_TIME: SourceLocation = SourceLocation {
    file: "(made at run time)",
    line: 0,
};

/// An argument of a [`DynamicPrompt`].
#[derive(Clone, Debug)]
pub struct PromptArgument {
    name: String,
    description: Option<String>,
    required: bool,
}

impl PromptArgument {
    /// An argument the client must give.
    pub fn required(name: impl Into<String>, description: impl Into<String>) -> PromptArgument {
        PromptArgument {
            name: name.into(),
            description: Some(description.into()),
            required: true,
        }
    }

    /// An argument the client may leave out.
    pub fn optional(name: impl Into<String>, description: impl Into<String>) -> PromptArgument {
        PromptArgument {
            required: false,
            ..PromptArgument::required(name, description)
        }
    }
}

type PromptCall =
    Arc<dyn Fn(Context, PromptArguments) -> crate::registry::PromptFuture + Send + Sync>;

/// A prompt made at run time: a name, a description, its arguments, and an async closure
/// that makes its messages. Its arguments are checked before the closure runs: a required
/// one missing, or one it does not take, is `-32602` naming it.
///
/// ```
/// use mcp_runtime::prelude::*;
/// use mcp_runtime::{DynamicPrompt, PromptArgument, PromptArguments};
///
/// let review = DynamicPrompt::new(
///     "review",
///     "Review a change.",
///     vec![PromptArgument::required("change", "The change to review.")],
///     |_ctx: Context, arguments: PromptArguments| async move {
///         let change: String = arguments.required("change")?;
///         Ok::<_, mcp_runtime::protocol::RpcError>(format!("Review this change: {change}"))
///     },
/// );
/// let server = mcp_runtime::server!().auto_register(false).dynamic_prompt(review).build().unwrap();
/// assert_eq!(server.prompt_names(), ["review"]);
/// ```
#[derive(Clone)]
pub struct DynamicPrompt {
    name: String,
    description: String,
    arguments: Vec<PromptArgument>,
    call: PromptCall,
    completer: Option<crate::registry::DynamicCompleter>,
    origin: Option<String>,
}

impl DynamicPrompt {
    /// A prompt named `name`, whose messages `call` makes (any prompt result: text, a
    /// message, messages, a `Result` of them).
    pub fn new<F, Fut, R>(
        name: impl Into<String>,
        description: impl Into<String>,
        arguments: Vec<PromptArgument>,
        call: F,
    ) -> DynamicPrompt
    where
        F: Fn(Context, PromptArguments) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoPromptResult,
    {
        DynamicPrompt {
            name: name.into(),
            description: description.into(),
            arguments,
            call: Arc::new(move |ctx, arguments| {
                let call = call(ctx, arguments);
                Box::pin(async move { call.await.into_prompt_result() })
            }),
            completer: None,
            origin: None,
        }
    }

    /// Names where the prompt comes from in error messages.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn with_origin(mut self, origin: String) -> Self {
        self.origin = Some(origin);
        self
    }

    /// Completes its arguments with `completer` (a mounted server's prompt: that server).
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn with_completer(mut self, completer: crate::registry::DynamicCompleter) -> Self {
        self.completer = Some(completer);
        self
    }

    /// The prompt's catalogue entry.
    pub(crate) fn build(&self) -> Result<CataloguePrompt, CatalogueError> {
        let descriptor = self.descriptor()?;
        let call = Arc::clone(&self.call);
        let handler: DynamicPromptHandler = Arc::new(move |ctx, arguments| {
            if let Err(problem) = check_prompt_arguments(descriptor, &arguments) {
                return Box::pin(std::future::ready(Err(problem)));
            }
            call(ctx, arguments)
        });
        let mut built = CataloguePrompt::build(descriptor)?;
        built.handler = Some(handler);
        built.completer = self.completer.clone();
        Ok(built)
    }

    /// The prompt's descriptor, made once for the life of the process (see [`made_once`]).
    fn descriptor(&self) -> Result<&'static PromptDescriptor, CatalogueError> {
        let key = serde_json::json!([
            self.origin,
            self.name,
            self.description,
            self.arguments
                .iter()
                .map(|a| (&a.name, &a.description, a.required))
                .collect::<Vec<_>>()
        ]);
        let origin = self.origin.as_deref();
        let item = Counted {
            kind: "prompt",
            name: &self.name,
            origin,
            parts: self.arguments.len() * std::mem::size_of::<PromptArgumentDescriptor>(),
        };
        made_once(key, item, || {
            let arguments: Vec<PromptArgumentDescriptor> = self
                .arguments
                .iter()
                .map(|a| PromptArgumentDescriptor {
                    name: leak(&a.name),
                    title: None,
                    description: a.description.as_deref().map(leak),
                    required: a.required,
                })
                .collect();
            PromptDescriptor {
                name: leak(&self.name),
                title: None,
                description: Some(leak(&self.description)),
                arguments: Box::leak(arguments.into_boxed_slice()),
                icons: &[],
                meta: None,
                completions: &[],
                get: |_, _| Box::pin(std::future::ready(Err(RpcError::internal("not callable")))),
                states: &[],
                scopes: &[],
                location: location(self.origin.as_deref()),
            }
        })
    }
}

impl std::fmt::Debug for DynamicPrompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicPrompt")
            .field("name", &self.name)
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}

/// Every required argument given, and no argument the prompt does not take.
fn check_prompt_arguments(
    descriptor: &PromptDescriptor,
    arguments: &PromptArguments,
) -> Result<(), RpcError> {
    let known: Vec<&str> = descriptor.arguments.iter().map(|a| a.name).collect();
    if let Some(unknown) = arguments.names().find(|name| !known.contains(name)) {
        let takes = if known.is_empty() {
            "it takes no arguments".to_owned()
        } else {
            format!("it takes {}", known.join(", "))
        };
        return Err(RpcError::invalid_params(format!(
            "the prompt `{}` has no argument `{unknown}`: {takes}",
            descriptor.name
        )));
    }
    let given: Vec<&str> = arguments.given().collect();
    if let Some(missing) = descriptor
        .arguments
        .iter()
        .find(|a| a.required && !given.contains(&a.name))
    {
        return Err(RpcError::invalid_params(format!(
            "missing required argument `{}` of the prompt `{}`",
            missing.name, descriptor.name
        )));
    }
    Ok(())
}

/// The read of a dynamic resource, given its declared MIME type.
type ResourceCall = Arc<
    dyn Fn(Context, ResourceRequest, Option<String>) -> crate::registry::ResourceFuture
        + Send
        + Sync,
>;

/// A resource or resource template made at run time: a URI (an RFC 6570 template when it has
/// variables), a name, a description, a MIME type, and an async closure that reads it. A
/// template's variables reach the closure in the [`ResourceRequest`]; a URI that matches no
/// resource is "resource not found" before any closure runs.
///
/// ```
/// use mcp_runtime::prelude::*;
/// use mcp_runtime::{DynamicResource, ResourceRequest};
///
/// let page = DynamicResource::new(
///     "wiki://{title}",
///     "page",
///     "A wiki page, by title.",
///     |_ctx: Context, request: ResourceRequest| async move {
///         let title: String = request.variables.required("title")?;
///         Ok::<_, mcp_runtime::protocol::RpcError>(format!("# {title}"))
///     },
/// )
/// .mime_type("text/markdown");
/// let server = mcp_runtime::server!().auto_register(false).dynamic_resource(page).build().unwrap();
/// # let _ = server;
/// ```
#[derive(Clone)]
pub struct DynamicResource {
    uri: String,
    name: String,
    description: String,
    mime_type: Option<String>,
    call: ResourceCall,
    completer: Option<crate::registry::DynamicCompleter>,
    origin: Option<String>,
}

impl DynamicResource {
    /// A resource at `uri` (or a template, when `uri` has variables), read by `call` (any
    /// resource contents: text, bytes, `Json<T>`, a `Result` of them).
    pub fn new<F, Fut, R>(
        uri: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
        call: F,
    ) -> DynamicResource
    where
        F: Fn(Context, ResourceRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoResourceContents,
    {
        let call: ResourceCall = Arc::new(move |ctx, request: ResourceRequest, mime| {
            let uri = request.uri.clone();
            let call = call(ctx, request);
            Box::pin(async move {
                call.await
                    .into_contents(&uri, mime.as_deref().or(R::MIME_TYPE))
            })
        });
        DynamicResource {
            uri: uri.into(),
            name: name.into(),
            description: description.into(),
            mime_type: None,
            call,
            completer: None,
            origin: None,
        }
    }

    /// Names where the resource comes from in error messages.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn with_origin(mut self, origin: String) -> Self {
        self.origin = Some(origin);
        self
    }

    /// Completes its template's variables with `completer` (a mounted server's template:
    /// that server).
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn with_completer(mut self, completer: crate::registry::DynamicCompleter) -> Self {
        self.completer = Some(completer);
        self
    }

    /// The MIME type its contents have.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> DynamicResource {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// The resource's catalogue entry (its URI template checked).
    pub(crate) fn build(&self) -> Result<CatalogueResource, CatalogueError> {
        let descriptor = self.descriptor()?;
        let call = Arc::clone(&self.call);
        let mime = self.mime_type.clone();
        let handler: DynamicResourceHandler =
            Arc::new(move |ctx, request| call(ctx, request, mime.clone()));
        let mut built = CatalogueResource::build(descriptor)?;
        built.handler = Some(handler);
        built.completer = self.completer.clone();
        Ok(built)
    }

    /// The resource's descriptor, made once for the life of the process (see
    /// [`made_once`]).
    fn descriptor(&self) -> Result<&'static ResourceDescriptor, CatalogueError> {
        let key = serde_json::json!([
            self.uri,
            self.name,
            self.description,
            self.mime_type,
            self.origin
        ]);
        let origin = self.origin.as_deref();
        let item = Counted {
            kind: "resource",
            name: &self.uri,
            origin,
            parts: 0,
        };
        made_once(key, item, || ResourceDescriptor {
            uri: leak(&self.uri),
            name: leak(&self.name),
            title: None,
            description: Some(leak(&self.description)),
            mime_type: self.mime_type.as_deref().map(leak),
            size: None,
            audience: &[],
            priority: None,
            last_modified: None,
            cache: None,
            icons: &[],
            meta: None,
            completions: &[],
            read: |_, _| Box::pin(std::future::ready(Err(RpcError::internal("not callable")))),
            list: None,
            states: &[],
            scopes: &[],
            location: location(self.origin.as_deref()),
        })
    }
}

impl std::fmt::Debug for DynamicResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicResource")
            .field("uri", &self.uri)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(name: &str) -> DynamicTool {
        DynamicTool::new(
            name,
            "A tool.",
            serde_json::json!({"type": "object"}),
            |_ctx: Context, _arguments: Value| async { "done" },
        )
    }

    #[test]
    fn a_tool_whose_name_is_not_a_tool_name_is_refused_naming_it() {
        let profile = SchemaProfile::default();
        assert!(named("get_weather.v2").build(&profile).is_ok());
        let long = "x".repeat(100_000);
        for (name, why) in [
            ("", "this one has 0"),
            ("a b", "not ' '"),
            ("nul\0byte", "not '\\0'"),
            (long.as_str(), "this one has 100000"),
        ] {
            let refusal = match named(name).build(&profile) {
                Err(refusal) => refusal,
                Ok(_) => panic!("the tool {name:?} is served"),
            };
            let CatalogueError::InvalidDynamicTool { name: named, .. } = &refusal else {
                panic!("{refusal:?}");
            };
            assert_eq!(*named, name.chars().take(200).collect::<String>());
            let message = refusal.to_string();
            assert!(
                message.starts_with(&format!("the tool `{}", named.escape_debug())),
                "{message}"
            );
            assert!(message.contains("its name is not a tool name"), "{message}");
            assert!(message.contains(why), "{message}");
        }
    }

    #[test]
    fn text_made_at_run_time_is_bounded_to_64_mib_in_all_whatever_its_origins() {
        let mut made = Made::default();
        // Four mounts, each at its own bound of 16 MiB: 64 MiB in all.
        for origin in ["a", "b", "c", "d"] {
            assert_eq!(made.count(MADE_TEXT_LIMIT_PER_ORIGIN, Some(origin)), Ok(()));
        }
        assert_eq!(made.bytes, MADE_TEXT_LIMIT);
        // A fifth mount, and the program's own items, are past the bound of all.
        assert_eq!(made.count(1, Some("e")), Err(MADE_TEXT_LIMIT));
        assert_eq!(made.count(1, None), Err(MADE_TEXT_LIMIT));
        // A refusal counts nothing.
        assert_eq!(made.bytes, MADE_TEXT_LIMIT);
        assert!(!made.by_origin.contains_key("e"));
    }

    #[test]
    fn text_of_one_origin_is_bounded_to_16_mib() {
        let mut made = Made::default();
        assert_eq!(made.count(MADE_TEXT_LIMIT_PER_ORIGIN, Some("a")), Ok(()));
        assert_eq!(made.count(1, Some("a")), Err(MADE_TEXT_LIMIT_PER_ORIGIN));
        assert_eq!(made.count(1, Some("b")), Ok(()));
        assert_eq!(made.count(1, None), Ok(()));
    }
}
