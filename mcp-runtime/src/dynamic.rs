//! Tools that are not known at compile time (feature `dynamic`): made at run time from a
//! name, a description, a JSON Schema and an async closure — from configuration, an OpenAPI
//! document, a database.
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

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use crate::content::{CallToolResult, IntoToolResult};
use crate::context::Context;
use crate::protocol::ToolAnnotations;
use crate::registry::{
    CatalogueError, CatalogueTool, DynamicHandler, SourceLocation, ToolDescriptor,
};
use crate::schema::SchemaProfile;

/// The future a dynamic tool's closure returns, boxed.
type Call = std::pin::Pin<Box<dyn Future<Output = CallToolResult> + Send>>;

/// A tool made at run time (see the [module](self)). Register it with
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
        }
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

    /// Checks the tool against `profile` and makes its catalogue entry.
    pub(crate) fn build(&self, profile: &SchemaProfile) -> Result<CatalogueTool, CatalogueError> {
        let refuse = |problem: String| CatalogueError::InvalidDynamicTool {
            name: self.name.clone(),
            problem,
        };
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
        let descriptor = descriptor(self);
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
}

impl std::fmt::Debug for DynamicTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicTool")
            .field("name", &self.name)
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

/// The descriptor of a tool made at run time. Descriptors are `'static` (every tool's is, and
/// the catalogue keeps them by address), so each distinct one is made once and kept for the
/// life of the process: adding the same tool again, or another with the same name,
/// description and annotations, reuses it.
fn descriptor(tool: &DynamicTool) -> &'static ToolDescriptor {
    static MADE: OnceLock<Mutex<HashMap<String, &'static ToolDescriptor>>> = OnceLock::new();
    let key =
        serde_json::json!([tool.name, tool.title, tool.description, tool.annotations]).to_string();
    let mut made = MADE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    made.entry(key).or_insert_with(|| {
        let leak = |text: &str| -> &'static str { Box::leak(text.to_owned().into_boxed_str()) };
        Box::leak(Box::new(ToolDescriptor {
            name: leak(&tool.name),
            title: tool.title.as_deref().map(leak),
            description: Some(leak(&tool.description)),
            annotations: tool.annotations,
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
            location: SourceLocation {
                file: "(a tool made at run time)",
                line: 0,
            },
        }))
    })
}
