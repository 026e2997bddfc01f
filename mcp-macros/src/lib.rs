//! Procedural macros of `mcp-runtime`. Depend on `mcp-runtime`, which re-exports them; the
//! documentation of each macro is on its re-export there.
//!
//! Each entry point only parses its input, hands it to `parse` (which validates and collects
//! every error with its span, emitting no code) and then to `expand` (model → tokens).

mod expand;
mod parse;
mod paths;

use proc_macro::TokenStream;

/// Turns a function into an MCP tool.
///
/// Grammar: `#[tool]` or `#[tool(key = value, …)]` with the keys `name = "…"`, `title = "…"`,
/// `description = "…"`, `args`, `icon(…)`, `meta = "{…}"`, `input_schema = function`,
/// `schema_profile = "…"` (one of `default`, `anthropic`, `gemini`, `openai-strict`,
/// `draft-07`: the tool's schemas are always sent in that profile, whatever the client), and
/// `annotations(read_only, destructive, idempotent, open_world)` (each flag alone means
/// `true`; `flag = false` states the opposite). The
/// function's doc comment is the tool's description (a tool without one is warned about) and
/// each parameter's doc comment its property's description; a `Context` parameter is
/// recognised by type and is not an argument. Only `args` makes the one parameter the whole
/// argument object, never its name. A parameter may carry `#[header]` or
/// `#[default = literal]`. See `mcp_runtime`'s documentation and the book's attribute
/// reference.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    match parse::function(
        item.into(),
        "tool",
        "a function (`fn name(…)`), which becomes the tool",
    ) {
        Ok(func) => expand::tool::expand(args.into(), func).into(),
        Err(tokens) => tokens.into(),
    }
}

/// Turns a function into an MCP prompt.
///
/// Grammar: `#[prompt]` or `#[prompt(key = value, …)]` with the keys `name`, `title`,
/// `description`, `complete(argument = function, …)`, `icon(src = "…", mime = "…", sizes =
/// "…")` and `meta = "{…}"`. Each parameter is an argument: its text is parsed with `FromStr`,
/// and it is optional when its type is `Option<T>`.
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    match parse::function(
        item.into(),
        "prompt",
        "a function (`fn name(…)`) that returns the prompt's messages",
    ) {
        Ok(func) => expand::prompt::expand(args.into(), func).into(),
        Err(tokens) => tokens.into(),
    }
}

/// Turns a function into an MCP resource, or a resource template when its URI has variables.
///
/// Grammar: `#[resource("uri", key = value, …)]` with the keys `name`, `title`,
/// `description`, `mime`, `size`, `audience(user, assistant)`, `priority`, `last_modified`,
/// `list = function`, `complete(variable = function, …)`, `icon(…)` and `meta = "{…}"`. Each
/// URI template variable binds to the parameter of the same name.
#[proc_macro_attribute]
pub fn resource(args: TokenStream, item: TokenStream) -> TokenStream {
    match parse::function(
        item.into(),
        "resource",
        "a function (`fn name(…)`) that returns the resource's contents",
    ) {
        Ok(func) => expand::resource::expand(args.into(), func).into(),
        Err(tokens) => tokens.into(),
    }
}

/// Runs an `async fn main` on the Tokio runtime that `mcp-runtime` carries, so a server needs
/// no direct dependency on Tokio.
///
/// Without arguments the runtime is the one `mcp-runtime`'s features choose: a single thread,
/// which serves stdio fastest, or one worker per core with the `multi-thread` feature (which
/// `http` turns on). With arguments it is `#[tokio::main(…)]` with those options, e.g.
/// `#[mcp_runtime::main(flavor = "multi_thread", worker_threads = 4)]`.
#[proc_macro_attribute]
pub fn main(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::main::expand("main", args.into(), item.into()).into()
}

/// Runs an `async fn` test on the Tokio runtime that `mcp-runtime` carries. Takes the options
/// of `#[tokio::test]`.
#[proc_macro_attribute]
pub fn test(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::main::expand("test", args.into(), item.into()).into()
}
