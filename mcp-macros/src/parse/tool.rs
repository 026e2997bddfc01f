//! `#[tool(…)]` on a function: its attribute, its parameters and its return type.

use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;

use super::extras::{Icon, parse_icon};
pub(crate) use super::signature::{Description, ParamKind};
use super::signature::{
    Item, Param, check_return_type, check_signature, parse_params, return_type, unraw,
};
use super::values::{
    bool_value, duration_value, key_text, path_text, path_value, skip_value, string_value,
};
use super::{Attr, Ctxt, suggestion};

const KEYS: &[&str] = &[
    "name",
    "title",
    "description",
    "annotations",
    "args",
    "icon",
    "meta",
    "input_schema",
    "schema_profile",
    "task",
    "timeout",
];
const ANNOTATION_KEYS: &[&str] = &["read_only", "destructive", "idempotent", "open_world"];
/// The built-in schema profiles by name, with their `SchemaProfile` variants.
const SCHEMA_PROFILES: &[(&str, &str)] = &[
    ("default", "Default"),
    ("anthropic", "Anthropic"),
    ("gemini", "Gemini"),
    ("openai-strict", "OpenAiStrict"),
    ("draft-07", "Draft07"),
];

/// The task support values by name, with their `TaskSupport` variants.
const TASK_SUPPORT: &[(&str, &str)] = &[
    ("never", "Never"),
    ("optional", "Optional"),
    ("required", "Required"),
];

/// A validated `#[tool]` function.
pub(crate) struct ToolModel {
    /// The function as it is emitted again (parameter doc comments removed).
    pub func: syn::ItemFn,
    /// The name on the wire.
    pub name: String,
    pub title: Option<syn::LitStr>,
    /// The description: the attribute's override, or the function's doc comment.
    pub description: Description,
    pub annotations: Annotations,
    pub icons: Vec<Icon>,
    pub meta: Option<syn::LitStr>,
    /// A function giving the input schema as written, instead of the derived one.
    pub input_schema: Option<syn::Path>,
    /// The `SchemaProfile` variant the tool is always sent in.
    pub schema_profile: Option<syn::Ident>,
    /// The `TaskSupport` variant: whether a call may become a task.
    pub task: Option<syn::Ident>,
    /// `timeout = "30s"`, in milliseconds.
    pub timeout_ms: Option<u64>,
    pub params: Vec<Param>,
    /// Whether the single non-context parameter is the whole argument object.
    pub args_struct: bool,
    pub return_type: Option<syn::Type>,
}

#[derive(Default)]
pub(crate) struct Annotations {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
}

/// Parses and validates; on error, returns the function stripped of what would cause
/// secondary errors, with every problem found.
pub(crate) fn parse(
    args: TokenStream,
    mut func: syn::ItemFn,
) -> Result<ToolModel, Box<(syn::ItemFn, syn::Error)>> {
    let cx = Ctxt::new();
    let attr = parse_attr(&cx, args);
    if let Some(lit) = &attr.name
        && let Err(problem) = check_tool_name(&lit.value())
    {
        cx.error_spanned_by(lit, problem);
    }
    check_signature(&cx, &mut func.sig, Item::Tool);
    let params = parse_params(&cx, &mut func, Item::Tool);
    check_return_type(&cx, &func.sig, Item::Tool);

    let name = match &attr.name {
        Some(lit) => lit.value(),
        None => unraw(&func.sig.ident),
    };
    let arguments = params
        .iter()
        .filter(|p| p.kind == ParamKind::Argument)
        .count();
    if let Some(span) = attr.args
        && arguments != 1
    {
        cx.error_at(
            span,
            format!("`args` needs exactly one parameter besides `Context`, the argument struct; this function has {arguments}"),
        );
    }
    // Only `#[tool(args)]` makes a parameter the whole argument object: a parameter's name
    // never changes what it means (`args: Vec<String>` is an argument named `args`).
    let args_struct = attr.args.is_some();
    if attr.args.is_some() {
        for default in params.iter().filter_map(|p| p.default.as_ref()) {
            cx.error_spanned_by(
                default,
                "`#[default]` gives one argument a default, and with `#[tool(args)]` this parameter is the whole argument object: put `#[serde(default = …)]` on the struct's fields instead",
            );
        }
    }
    check_headers(&cx, &params, &attr);
    let return_type = return_type(&func);
    let description = Description::new(attr.description, &func.attrs);
    match cx.check() {
        Ok(()) => Ok(ToolModel {
            func,
            name,
            title: attr.title,
            description,
            annotations: attr.annotations,
            icons: attr.icons,
            meta: attr.meta,
            input_schema: attr.input_schema,
            schema_profile: attr.schema_profile,
            task: attr.task,
            timeout_ms: attr.timeout_ms,
            params,
            args_struct,
            return_type,
        }),
        Err(e) => Err(Box::new((func, e))),
    }
}

struct ToolAttr {
    name: Option<syn::LitStr>,
    title: Option<syn::LitStr>,
    description: Option<syn::LitStr>,
    annotations: Annotations,
    args: Option<Span>,
    icons: Vec<Icon>,
    meta: Option<syn::LitStr>,
    input_schema: Option<syn::Path>,
    schema_profile: Option<syn::Ident>,
    task: Option<syn::Ident>,
    timeout_ms: Option<u64>,
}

fn parse_attr(cx: &Ctxt, args: TokenStream) -> ToolAttr {
    let mut name = Attr::none(cx, "name");
    let mut title = Attr::none(cx, "title");
    let mut description = Attr::none(cx, "description");
    let mut args_flag = Attr::none(cx, "args");
    let mut read_only = Attr::none(cx, "read_only");
    let mut destructive = Attr::none(cx, "destructive");
    let mut idempotent = Attr::none(cx, "idempotent");
    let mut open_world = Attr::none(cx, "open_world");
    let mut meta_json = Attr::none(cx, "meta");
    let mut input_schema = Attr::none(cx, "input_schema");
    let mut schema_profile = Attr::none(cx, "schema_profile");
    let mut task = Attr::none(cx, "task");
    let mut timeout = Attr::none(cx, "timeout");
    let mut icons = Vec::new();

    let parser = syn::meta::parser(|meta| {
        let key = key_text(&meta);
        match key.as_str() {
            "name" => {
                if let Some(lit) = string_value(cx, &meta, "get_weather")? {
                    name.set(&meta.path, lit);
                }
            }
            "title" => {
                if let Some(lit) = string_value(cx, &meta, "Get weather")? {
                    title.set(&meta.path, lit);
                }
            }
            "description" => {
                if let Some(lit) = string_value(cx, &meta, "The weather in a city.")? {
                    description.set(&meta.path, lit);
                }
            }
            "icon" => icons.extend(parse_icon(cx, &meta)?),
            "meta" => {
                if let Some(lit) = string_value(cx, &meta, "{\"team\": \"search\"}")? {
                    meta_json.set(&meta.path, lit);
                }
            }
            "schema_profile" => {
                if let Some(lit) = string_value(cx, &meta, "anthropic")?
                    && let Some(variant) = schema_profile_variant(cx, &lit)
                {
                    schema_profile.set(&meta.path, variant);
                }
            }
            "task" => {
                if meta.input.is_empty() || meta.input.peek(syn::Token![,]) {
                    // `task` alone: a task when the client can have one.
                    task.set(&meta.path, syn::Ident::new("Optional", meta.path.span()));
                } else if let Some(lit) = string_value(cx, &meta, "required")?
                    && let Some(variant) = task_support_variant(cx, &lit)
                {
                    task.set(&meta.path, variant);
                }
            }
            "timeout" => {
                if let Some(ms) = duration_value(cx, &meta, "30s", false)? {
                    timeout.set(&meta.path, ms);
                }
            }
            "input_schema" => {
                if let Some(path) = path_value(cx, &meta, "weather_schema")? {
                    input_schema.set(&meta.path, path);
                }
            }
            "args" => {
                if !meta.input.is_empty() && !meta.input.peek(syn::Token![,]) {
                    let value = skip_value(&meta)?;
                    cx.error_spanned_by(
                        value,
                        "`args` must be given alone, without a value: `#[tool(args)]`",
                    );
                }
                args_flag.set(&meta.path, meta.path.span());
            }
            "annotations" => meta.parse_nested_meta(|hint| {
                let key = key_text(&hint);
                let value = if hint.input.peek(syn::Token![=]) {
                    bool_value(cx, &hint)?
                } else {
                    Some(true)
                };
                let slot = match key.as_str() {
                    "read_only" => &mut read_only,
                    "destructive" => &mut destructive,
                    "idempotent" => &mut idempotent,
                    "open_world" => &mut open_world,
                    _ => {
                        skip_value(&hint)?;
                        cx.error_spanned_by(
                            &hint.path,
                            format!(
                                "unknown annotation `{}`{}",
                                path_text(&hint.path),
                                suggestion(&key, ANNOTATION_KEYS)
                            ),
                        );
                        return Ok(());
                    }
                };
                if let Some(value) = value {
                    slot.set(&hint.path, value);
                }
                Ok(())
            })?,
            _ => {
                skip_value(&meta)?;
                cx.error_spanned_by(
                    &meta.path,
                    format!(
                        "unknown attribute `{}`{}",
                        path_text(&meta.path),
                        suggestion(&key, KEYS)
                    ),
                );
            }
        }
        Ok(())
    });
    if let Err(e) = syn::parse::Parser::parse2(parser, args) {
        cx.syn_error(e);
    }
    ToolAttr {
        name: name.get(),
        title: title.get(),
        description: description.get(),
        args: args_flag.get(),
        icons,
        meta: meta_json.get(),
        input_schema: input_schema.get(),
        schema_profile: schema_profile.get(),
        task: task.get(),
        timeout_ms: timeout.get(),
        annotations: Annotations {
            read_only: read_only.get(),
            destructive: destructive.get(),
            idempotent: idempotent.get(),
            open_world: open_world.get(),
        },
    }
}

/// The `SchemaProfile` variant a profile name stands for; an unknown name is reported at the
/// string, with the names there are.
fn schema_profile_variant(cx: &Ctxt, lit: &syn::LitStr) -> Option<syn::Ident> {
    let value = lit.value();
    if let Some((_, variant)) = SCHEMA_PROFILES.iter().find(|(name, _)| *name == value) {
        return Some(syn::Ident::new(variant, lit.span()));
    }
    let names: Vec<&str> = SCHEMA_PROFILES.iter().map(|(name, _)| *name).collect();
    let close = suggestion(&value.to_ascii_lowercase(), &names);
    let close = if close.starts_with("; did you mean") {
        format!("{close} The")
    } else {
        "; the".to_owned()
    };
    let listed: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    cx.error_spanned_by(
        lit,
        format!(
            "unknown schema profile `{value}`{close} profiles are {}; a custom one is set on the server builder",
            listed.join(", ")
        ),
    );
    None
}

/// The `TaskSupport` variant a `task = "…"` value stands for.
fn task_support_variant(cx: &Ctxt, lit: &syn::LitStr) -> Option<syn::Ident> {
    let value = lit.value();
    if let Some((_, variant)) = TASK_SUPPORT.iter().find(|(name, _)| *name == value) {
        return Some(syn::Ident::new(variant, lit.span()));
    }
    cx.error_spanned_by(
        lit,
        format!(
            "unknown task support `{value}`: expected `\"optional\"` (a task when the client supports tasks, the same as `task` alone), `\"required\"` (only ever a task) or `\"never\"`"
        ),
    );
    None
}

/// `#[header]` parameters: never with a schema written by hand (which carries its own
/// `x-mcp-header`) or with an argument struct, and each header name once, whatever its case.
fn check_headers(cx: &Ctxt, params: &[Param], attr: &ToolAttr) {
    let mut seen: Vec<&str> = Vec::new();
    for header in params.iter().filter_map(|p| p.header.as_ref()) {
        if attr.input_schema.is_some() {
            cx.error_spanned_by(
                &header.attr,
                "`#[header]` cannot be used with `input_schema`: write `\"x-mcp-header\": \"…\"` in that schema's property instead",
            );
        } else if attr.args.is_some() {
            cx.error_spanned_by(
                &header.attr,
                "`#[header]` marks one argument, and an argument struct is the whole argument object: mark the struct's field with `#[schemars(extend(\"x-mcp-header\" = \"…\"))]` instead",
            );
        } else if let Some(first) = seen.iter().find(|n| n.eq_ignore_ascii_case(&header.name)) {
            cx.error_spanned_by(
                &header.attr,
                format!(
                    "the header `Mcp-Param-{}` is already mirrored from another parameter (as `{first}`); header names are compared without regard to case",
                    header.name
                ),
            );
        } else {
            seen.push(&header.name);
        }
    }
}

/// MCP 2025-11-25: tool names are 1 to 128 characters of `A-Z a-z 0-9 _ - .`.
fn check_tool_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 128 {
        return Err(format!(
            "a tool name must be 1 to 128 characters long; this one has {}",
            name.chars().count()
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        let found = match c {
            ' ' => "a space".to_owned(),
            c if c.is_whitespace() || c.is_control() => format!("`{}`", c.escape_default()),
            c => format!("`{c}`"),
        };
        return Err(format!(
            "a tool name may contain only ASCII letters, digits, `_`, `-` and `.`, not {found}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_follow_the_2025_11_25_rules() {
        assert!(check_tool_name("get_weather.v2-beta").is_ok());
        assert!(check_tool_name("").is_err());
        assert!(check_tool_name("has space").is_err());
        assert!(check_tool_name(&"x".repeat(129)).is_err());
        assert!(check_tool_name(&"x".repeat(128)).is_ok());
    }
}
