//! Procedural macros of `mcp-runtime`. Depend on `mcp-runtime`, which re-exports them; the
//! documentation of each macro is on its re-export there.
//!
//! This file holds only the entry points. An item attribute goes through three steps: `parse`
//! reads the attribute and the function into a model, each piece on its own, and `validate`
//! checks the pieces against each other, both recording every error with its span in one
//! `ctxt::Ctxt`; then `expand` writes the model's code, or, when there were errors,
//! `expand::fallback` writes the function with its hidden struct and the errors, so nothing
//! after them fails in turn. `#[mcp_runtime::main]` without options is checked and expanded
//! the same way. Only `expand` writes code, with the paths of `paths.rs`.

mod ctxt;
mod expand;
mod parse;
mod paths;
mod validate;

use proc_macro::TokenStream;

use crate::parse::Kind;

/// Turns a function into an MCP tool.
///
/// Grammar: `#[tool]` or `#[tool(key = value, …)]` with the keys `name = "…"`, `title = "…"`,
/// `description = "…"`, `args`, `icon(…)`, `meta = "{…}"`, `input_schema = function`,
/// `scopes("notes:write", …)` (the OAuth scopes a caller's token must grant; also on
/// `#[prompt]` and `#[resource]`), `schema_profile = "…"` (one of `default`, `anthropic`,
/// `gemini`, `openai-strict`,
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
    item_attribute(Kind::Tool, args, item)
}

/// Turns a function into an MCP prompt.
///
/// Grammar: `#[prompt]` or `#[prompt(key = value, …)]` with the keys `name`, `title`,
/// `description`, `complete(argument = function, …)`, `icon(src = "…", mime = "…", sizes =
/// "…")` and `meta = "{…}"`. Each parameter is an argument: its text is parsed with `FromStr`,
/// and it is optional when its type is `Option<T>`.
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    item_attribute(Kind::Prompt, args, item)
}

/// Turns a function into an MCP resource, or a resource template when its URI has variables.
///
/// Grammar: `#[resource("uri", key = value, …)]` with the keys `name`, `title`,
/// `description`, `mime`, `size`, `audience(user, assistant)`, `priority`, `last_modified`,
/// `list = function`, `complete(variable = function, …)`, `icon(…)` and `meta = "{…}"`. Each
/// URI template variable binds to the parameter of the same name.
#[proc_macro_attribute]
pub fn resource(args: TokenStream, item: TokenStream) -> TokenStream {
    item_attribute(Kind::Resource, args, item)
}

/// Makes the `#[tool]` methods of an `impl` block tools whose `&self` is a value the server is
/// given with `ServerBuilder::toolbox(value)` (which is also state of its type).
///
/// Grammar: `#[toolbox]` on an inherent, non-generic `impl` block. Its `#[tool]` methods take
/// `&self` (or no `self`) and are read as `#[tool]` functions are: the same keys, schemas and
/// errors. Methods without `#[tool]` stay ordinary methods. The tools are not registered
/// automatically: only a value can serve them.
#[proc_macro_attribute]
pub fn toolbox(args: TokenStream, item: TokenStream) -> TokenStream {
    let cx = ctxt::Ctxt::new();
    let model = match parse::toolbox::parse(&cx, args.into(), item.into()) {
        Ok(model) => model,
        Err(error) => {
            let _ = cx.check();
            return error.into_compile_error().into();
        }
    };
    for tool in &model.tools {
        validate::tool(&cx, tool);
    }
    match cx.check() {
        Ok(()) => expand::toolbox::expand(&model),
        Err(errors) => expand::toolbox::fallback(&model, errors),
    }
    .into()
}

/// Runs an `async fn main` on the Tokio runtime that `mcp-runtime` carries, so a server needs
/// no direct dependency on Tokio.
///
/// Without arguments the runtime fits the transport: a single thread, which serves stdio
/// fastest and in the least memory, unless the build has the `multi-thread` feature (which
/// `http` turns on) and the command line names an HTTP address (`--http ADDR`, as
/// `Server::serve` reads it); then one worker per core. A `main` that calls `serve_http`
/// itself gets its HTTP served on a multi-threaded scheduler either way. With arguments it is
/// `#[tokio::main(…)]` with those options, e.g.
/// `#[mcp_runtime::main(flavor = "multi_thread", worker_threads = 4)]`, for a `main` that
/// wants every core for work of its own.
#[proc_macro_attribute]
pub fn main(args: TokenStream, item: TokenStream) -> TokenStream {
    if !args.is_empty() {
        return expand::main::tokio_entry("main", args.into(), item.into()).into();
    }
    let func = match syn::parse2::<syn::ItemFn>(item.clone().into()) {
        Ok(func) => func,
        Err(error) => return expand::fallback::main_unreadable(item.into(), error).into(),
    };
    let cx = ctxt::Ctxt::new();
    validate::main(&cx, &func);
    match cx.check() {
        Ok(()) => expand::main::main(func),
        Err(errors) => expand::fallback::main(&func, errors),
    }
    .into()
}

/// Runs an `async fn` test on the Tokio runtime that `mcp-runtime` carries. Takes the options
/// of `#[tokio::test]`.
#[proc_macro_attribute]
pub fn test(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::main::tokio_entry("test", args.into(), item.into()).into()
}

/// parse → validate → expand, or the fallback when there are errors.
fn item_attribute(kind: Kind, args: TokenStream, item: TokenStream) -> TokenStream {
    let func = match parse::function(item.into(), kind) {
        Ok(func) => func,
        Err(not_a_function) => return expand::fallback::not_a_function(not_a_function).into(),
    };
    let cx = ctxt::Ctxt::new();
    let item = parse::item(&cx, kind, args.into(), func);
    validate::item(&cx, &item);
    match cx.check() {
        Ok(()) => expand::item(&item),
        Err(errors) => expand::fallback::item(&item, errors),
    }
    .into()
}
