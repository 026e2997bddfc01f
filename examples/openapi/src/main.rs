//! An MCP server made at run time from an OpenAPI 3 document: one tool per operation, whose
//! arguments are the operation's path and query parameters and its JSON request body, and
//! whose call makes the HTTP request. Run it with `cargo run -p openapi` to serve the pet
//! store of `petstore.json` (at the URL the document names, or `--base-url URL`), or give
//! another document with `--spec PATH`; add `--http 127.0.0.1:8080` to serve Streamable HTTP
//! instead of standard input and output.

mod client;
mod openapi;

use std::path::PathBuf;
use std::sync::Arc;

use hyper::Method;
use mcp_runtime::prelude::*;
use mcp_runtime::serde_json::Value;
use mcp_runtime::{DynamicTool, Error, ToolAnnotations};

use crate::client::Api;
use crate::openapi::{Document, Operation};

/// The document served without `--spec`: a small pet store.
const PETSTORE: &str = include_str!("../petstore.json");

/// What the command line asks for.
struct Args {
    /// `--spec PATH`: the OpenAPI document to serve.
    spec: Option<PathBuf>,
    /// `--base-url URL`: where the API is, instead of the document's first server.
    base_url: Option<String>,
}

impl Args {
    /// Reads `--spec PATH` and `--base-url URL` (or `--name=value`). `--http ADDR` is read by
    /// `serve`, which leaves the other arguments to the program; here it is only stepped over.
    fn parse() -> mcp_runtime::Result<Args> {
        let usage = |problem: String| {
            Error::Usage(format!(
                "{problem}\nusage: openapi [--spec PATH] [--base-url http://HOST:PORT/PATH] [--http ADDR]"
            ))
        };
        let mut parsed = Args {
            spec: None,
            base_url: None,
        };
        let mut args = std::env::args().skip(1).peekable();
        while let Some(arg) = args.next() {
            let (name, inline) = match arg.split_once('=') {
                Some((name, value)) => (name, Some(value.to_owned())),
                None => (arg.as_str(), None),
            };
            let value = inline
                .or_else(|| args.next_if(|next| !next.starts_with("--")))
                .filter(|value| !value.is_empty());
            match (name, value) {
                ("--spec", Some(path)) => parsed.spec = Some(PathBuf::from(path)),
                ("--spec", None) => {
                    return Err(usage(
                        "--spec needs the path of an OpenAPI document written as JSON, e.g. --spec api.json".into(),
                    ));
                }
                ("--base-url", Some(url)) => parsed.base_url = Some(url),
                ("--base-url", None) => {
                    return Err(usage(
                        "--base-url needs the API's URL, e.g. --base-url http://127.0.0.1:8080/v1"
                            .into(),
                    ));
                }
                ("--http", Some(_)) => {}
                ("--http", None) => {
                    return Err(usage(
                        "--http needs an address, e.g. --http 127.0.0.1:8080".into(),
                    ));
                }
                _ => return Err(usage(format!("unknown argument `{arg}`"))),
            }
        }
        Ok(parsed)
    }
}

/// The tool that calls `operation` on `api`. Its arguments are validated against the
/// operation's schema before the closure runs, so an invalid call makes no request.
fn tool(operation: Operation, api: Arc<Api>) -> DynamicTool {
    let (read_only, destructive, idempotent) = match operation.method {
        Method::GET | Method::HEAD | Method::OPTIONS => (true, None, true),
        Method::DELETE => (false, Some(true), true),
        Method::PUT => (false, None, true),
        _ => (false, None, false),
    };
    let annotations = ToolAnnotations {
        read_only: Some(read_only),
        destructive,
        idempotent: idempotent.then_some(true),
        ..ToolAnnotations::NONE
    };
    let (name, description, schema) = (
        operation.name.clone(),
        operation.description.clone(),
        operation.schema.clone(),
    );
    let operation = Arc::new(operation);
    DynamicTool::new(
        name,
        description,
        schema,
        move |ctx: Context, arguments: Value| {
            let (api, operation) = (Arc::clone(&api), Arc::clone(&operation));
            async move { api.call(&ctx, &operation, &arguments).await }
        },
    )
    .annotations(annotations)
}

#[mcp_runtime::main]
async fn main() -> mcp_runtime::Result<()> {
    let args = Args::parse()?;
    let (text, origin) = match &args.spec {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                Error::Usage(format!(
                    "cannot read the OpenAPI document {}: {e}",
                    path.display()
                ))
            })?;
            (text, path.display().to_string())
        }
        None => (PETSTORE.to_owned(), "the built-in petstore.json".to_owned()),
    };
    let document = Document::parse(&text)
        .map_err(|e| Error::Usage(format!("{origin} cannot be served: {e}")))?;
    let base_url = args.base_url.or_else(|| document.server_url()).ok_or_else(|| {
        Error::Usage(format!(
            "{origin} names no server: give the API's URL with --base-url, e.g. --base-url http://127.0.0.1:8080"
        ))
    })?;
    let api = Arc::new(Api::new(&base_url).map_err(Error::Usage)?);

    let (operations, left_out) = document.operations();
    for problem in &left_out {
        eprintln!("openapi: {problem}");
    }
    if operations.is_empty() {
        return Err(Error::Usage(format!(
            "{origin} has no operation this example can serve"
        )));
    }
    let instructions = format!(
        "{}{} Each tool is one operation of the API at {}: a call makes the HTTP request and returns the status and the JSON body; an answer other than 2xx is a tool error naming the status.",
        document.title().unwrap_or("An HTTP API"),
        document
            .description()
            .map(|d| format!(": {d}"))
            .unwrap_or_else(|| ".".into()),
        api.url(),
    );
    let mut server = mcp_runtime::server!().instructions(instructions);
    for operation in operations {
        server = server.dynamic_tool(tool(operation, Arc::clone(&api)));
    }
    server.serve().await
}
