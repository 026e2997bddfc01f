//! What no single piece of an item shows: its attribute, its parameters and its URI template
//! checked against each other (thiserror's `valid.rs`). Runs after `parse`, on its model, and
//! records every problem in the same [`Ctxt`], after those `parse` found. Also what
//! `#[mcp_runtime::main]` needs of its function.

use syn::spanned::Spanned;

use mcp_grammar::header::{PREFIX, same_header};

use crate::ctxt::Ctxt;
use crate::parse::Item;
use crate::parse::attr::suggestion;
use crate::parse::common::CompleteEntry;
use crate::parse::prompt::PromptModel;
use crate::parse::resource::ResourceModel;
use crate::parse::signature::{ParamKind, TextParam, WrittenParams, unraw};
use crate::parse::tool::ToolModel;
use crate::parse::uri::{Variable, parameter_name, span_inside};

/// `#[mcp_runtime::main]` goes on an `async fn main` without parameters.
pub(crate) fn main(cx: &Ctxt, func: &syn::ItemFn) {
    if func.sig.asyncness.is_none() {
        cx.error_at(
            func.sig.fn_token.span(),
            "`#[mcp_runtime::main]` goes on an `async fn main`: add `async`",
        );
    }
    if !func.sig.inputs.is_empty() {
        cx.error_spanned_by(
            &func.sig.inputs,
            "`main` takes no parameters: read the command line with `std::env::args()`",
        );
    }
}

pub(crate) fn item(cx: &Ctxt, item: &Item) {
    match item {
        Item::Tool(m) => tool(cx, m),
        Item::Prompt(m) => prompt(cx, m),
        Item::Resource(m) => resource(cx, m),
    }
}

/// `args` takes one parameter, which is then the whole argument object: no `#[default]` or
/// `#[header]` on it; `#[header]` names each header once and is not used with a schema written
/// by hand.
pub(crate) fn tool(cx: &Ctxt, m: &ToolModel) {
    let arguments = m
        .params
        .iter()
        .filter(|p| p.kind == ParamKind::Argument)
        .count();
    if let Some(span) = m.args
        && arguments != 1
    {
        cx.error_at(
            span,
            format!("`args` needs exactly one parameter besides `Context`, the argument struct; this function has {arguments}"),
        );
    }
    // Only `#[tool(args)]` makes a parameter the whole argument object: a parameter's name
    // never changes what it means (`args: Vec<String>` is an argument named `args`).
    if m.args.is_some() {
        for default in m.params.iter().filter_map(|p| p.default.as_ref()) {
            cx.error_spanned_by(
                default,
                "`#[default]` gives one argument a default, and with `#[tool(args)]` this parameter is the whole argument object: put `#[serde(default = …)]` on the struct's fields instead",
            );
        }
    }
    let mut seen: Vec<&str> = Vec::new();
    for header in m.params.iter().filter_map(|p| p.header.as_ref()) {
        if m.input_schema.is_some() {
            cx.error_spanned_by(
                &header.attr,
                "`#[header]` cannot be used with `input_schema`: write `\"x-mcp-header\": \"…\"` in that schema's property instead",
            );
        } else if m.args.is_some() {
            cx.error_spanned_by(
                &header.attr,
                "`#[header]` marks one argument, and an argument struct is the whole argument object: mark the struct's field with `#[schemars(extend(\"x-mcp-header\" = \"…\"))]` instead",
            );
        } else if let Some(first) = seen.iter().find(|n| same_header(n, &header.name)) {
            cx.error_spanned_by(
                &header.attr,
                format!(
                    "the header `{PREFIX}{}` is already mirrored from another parameter (as `{first}`); header names are compared without regard to case",
                    header.name
                ),
            );
        } else {
            seen.push(&header.name);
        }
    }
}

/// Each completion names an argument of the prompt.
fn prompt(cx: &Ctxt, m: &PromptModel) {
    let params = &m.params;
    let written: &WrittenParams = &m.written;
    let names: Vec<String> = params
        .iter()
        .filter(|p| p.param.kind == ParamKind::Argument)
        .map(|p| unraw(&p.param.ident))
        .collect();
    for entry in &m.completions {
        let argument = unraw(&entry.argument);
        // A rejected parameter has its own error; a `Context` is no argument.
        let rejected =
            written.covers(&argument) && !params.iter().any(|p| unraw(&p.param.ident) == argument);
        if !names.contains(&argument) && !rejected {
            let known: Vec<&str> = names.iter().map(String::as_str).collect();
            let is_context = params
                .iter()
                .any(|p| p.param.kind == ParamKind::Context && unraw(&p.param.ident) == argument);
            let hint = if is_context {
                "; it is the `Context`, which the runtime supplies".to_owned()
            } else if !known.is_empty() {
                suggestion(&argument, &known)
            } else if written.names.is_empty() && !written.has_pattern {
                "; it takes no arguments".to_owned()
            } else {
                String::new()
            };
            cx.error_spanned_by(
                &entry.argument,
                format!("the prompt has no argument `{argument}` to complete{hint}"),
            );
        }
    }
}

/// The URI template's variables and the parameters bind one to one; completions name
/// variables; only a template is listed. Nothing is checked when the template is missing or
/// malformed (already reported): which parameters it binds is then unknown, and checking them
/// would only add confusing errors.
fn resource(cx: &Ctxt, m: &ResourceModel) {
    let (Some(uri), Some(variables)) = (&m.uri, &m.variables) else {
        return;
    };
    bind_variables(cx, uri, variables, &m.params, &m.written);
    check_completions(cx, &m.completions, variables);
    if let Some(list) = &m.list
        && variables.is_empty()
    {
        cx.error_spanned_by(
            list,
            "`list` belongs to a URI template: a static resource is listed by itself; remove `list`, or add a `{variable}` to the URI",
        );
    }
}

/// Every variable needs a parameter of its name, and every parameter but `Context` a variable.
fn bind_variables(
    cx: &Ctxt,
    uri: &syn::LitStr,
    variables: &[Variable],
    params: &[TextParam],
    written: &WrittenParams,
) {
    for variable in variables {
        let bound = params.iter().find(|p| {
            p.param.kind == ParamKind::Argument && unraw(&p.param.ident) == variable.name
        });
        match bound {
            None if params.iter().any(|p| unraw(&p.param.ident) == variable.name) => cx
                .error_at(
                    span_inside(uri, &variable.range),
                    format!(
                        "the URI template variable `{}` is bound to a `Context` parameter: rename the `Context`, and add `{}: String` (or any type that implements `FromStr`)",
                        variable.name,
                        parameter_name(&variable.name)
                    ),
                ),
            None if written.covers(&variable.name) => {}
            None => cx.error_at(
                span_inside(uri, &variable.range),
                format!(
                    "the URI template variable `{}` has no parameter: add `{}: String` (or any type that implements `FromStr`) to the function",
                    variable.name,
                    parameter_name(&variable.name)
                ),
            ),
            Some(p) if variable.query && p.required => cx.error_spanned_by(
                &p.param.ty,
                format!(
                    "`{}` is a query variable, which a URI may leave out: make its parameter an `Option<{}>`",
                    variable.name,
                    quote::ToTokens::to_token_stream(&p.param.ty)
                        .to_string()
                        .replace(' ', "")
                ),
            ),
            Some(_) => {}
        }
    }
    for p in params
        .iter()
        .filter(|p| p.param.kind == ParamKind::Argument)
    {
        let name = unraw(&p.param.ident);
        if !variables.iter().any(|v| v.name == name) {
            let message = if variables.is_empty() {
                format!(
                    "a static resource takes no arguments, but `{name}` is a parameter: add `{{{name}}}` to the URI to make it a template"
                )
            } else {
                format!(
                    "the parameter `{name}` is not a variable of the URI template: add `{{{name}}}` to the URI, or remove the parameter"
                )
            };
            cx.error_spanned_by(&p.param.ident, message);
        }
    }
}

fn check_completions(cx: &Ctxt, completions: &[CompleteEntry], variables: &[Variable]) {
    for entry in completions {
        let argument = unraw(&entry.argument);
        if variables.iter().any(|v| v.name == argument) {
            continue;
        }
        let message = if variables.is_empty() {
            format!(
                "a static resource has no variable `{argument}` to complete: `complete` belongs to a URI template"
            )
        } else {
            let known: Vec<&str> = variables.iter().map(|v| v.name.as_str()).collect();
            format!(
                "the URI template has no variable `{argument}` to complete{}",
                suggestion(&argument, &known)
            )
        };
        cx.error_spanned_by(&entry.argument, message);
    }
}
