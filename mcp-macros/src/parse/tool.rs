//! `#[tool(…)]` on a function: its attribute (the shared keys, `annotations`, `args`,
//! `input_schema`, `schema_profile`, `task`, `timeout`), its parameters and its return type.

use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;

use super::Kind;
use super::attr::{Attr, suggestion};
use super::common::{Common, CommonKeys, Examples, read_keys};
use super::signature::{Param, check_return_type, check_signature, parse_params, return_type};
use super::values::{
    bool_value, duration_value, key_text, path_text, path_value, skip_value, string_value,
};
use crate::ctxt::Ctxt;

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
    "scopes",
];
const EXAMPLES: Examples = Examples {
    name: "get_weather",
    title: "Get weather",
    description: "The weather in a city.",
    meta: "{\"team\": \"search\"}",
};
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

/// A `#[tool]` function.
pub(crate) struct ToolModel {
    /// The function as it is emitted again (parameter doc comments removed).
    pub func: syn::ItemFn,
    pub common: Common,
    pub annotations: Annotations,
    /// A function giving the input schema as written, instead of the derived one.
    pub input_schema: Option<syn::Path>,
    /// The `SchemaProfile` variant the tool is always sent in.
    pub schema_profile: Option<syn::Ident>,
    /// The `TaskSupport` variant: whether a call may become a task.
    pub task: Option<syn::Ident>,
    /// `timeout = "30s"`, in milliseconds.
    pub timeout_ms: Option<u64>,
    pub params: Vec<Param>,
    /// `args`, where it is written: the one parameter besides `Context` is the whole argument
    /// object.
    pub args: Option<Span>,
    pub return_type: Option<syn::Type>,
    /// The type of the `#[toolbox]` block the tool is a method of.
    pub owner: Option<syn::Type>,
}

#[derive(Default)]
pub(crate) struct Annotations {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
}

/// Reads the attribute and the function, each on its own.
pub(crate) fn parse(
    cx: &Ctxt,
    args: TokenStream,
    mut func: syn::ItemFn,
    owner: Option<&syn::Type>,
) -> ToolModel {
    let attr = parse_attr(cx, args);
    if let Some(lit) = &attr.common.name
        && let Err(problem) = check_tool_name(&lit.value())
    {
        cx.error_spanned_by(lit, problem);
    }
    check_signature(cx, &mut func.sig, Kind::Tool);
    let params = parse_params(cx, &mut func, Kind::Tool, owner.is_some());
    check_return_type(cx, &func.sig, Kind::Tool);
    ToolModel {
        common: Common::new(attr.common, &func),
        return_type: return_type(&func),
        func,
        annotations: attr.annotations,
        input_schema: attr.input_schema,
        schema_profile: attr.schema_profile,
        task: attr.task,
        timeout_ms: attr.timeout_ms,
        params,
        args: attr.args,
        owner: owner.cloned(),
    }
}

struct ToolAttr {
    common: super::common::CommonAttr,
    annotations: Annotations,
    args: Option<Span>,
    input_schema: Option<syn::Path>,
    schema_profile: Option<syn::Ident>,
    task: Option<syn::Ident>,
    timeout_ms: Option<u64>,
}

fn parse_attr(cx: &Ctxt, args: TokenStream) -> ToolAttr {
    let mut common = CommonKeys::new(cx, &EXAMPLES);
    let mut args_flag = Attr::none(cx, "args");
    let mut read_only = Attr::none(cx, "read_only");
    let mut destructive = Attr::none(cx, "destructive");
    let mut idempotent = Attr::none(cx, "idempotent");
    let mut open_world = Attr::none(cx, "open_world");
    let mut input_schema = Attr::none(cx, "input_schema");
    let mut schema_profile = Attr::none(cx, "schema_profile");
    let mut task = Attr::none(cx, "task");
    let mut timeout = Attr::none(cx, "timeout");

    read_keys(cx, args, &mut common, KEYS, |key, meta| {
        match key {
            "schema_profile" => {
                if let Some(lit) = string_value(cx, meta, "anthropic")?
                    && let Some(variant) = schema_profile_variant(cx, &lit)
                {
                    schema_profile.set(&meta.path, variant);
                }
            }
            "task" => {
                if meta.input.is_empty() || meta.input.peek(syn::Token![,]) {
                    // `task` alone: a task when the client can have one.
                    task.set(&meta.path, syn::Ident::new("Optional", meta.path.span()));
                } else if let Some(lit) = string_value(cx, meta, "required")?
                    && let Some(variant) = task_support_variant(cx, &lit)
                {
                    task.set(&meta.path, variant);
                }
            }
            "timeout" => timeout.set_read(meta, duration_value(cx, meta, "30s", false)?),
            "input_schema" => {
                input_schema.set_read(meta, path_value(cx, meta, "weather_schema")?);
            }
            "args" => {
                if !meta.input.is_empty() && !meta.input.peek(syn::Token![,]) {
                    let value = skip_value(meta)?;
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
            _ => return Ok(false),
        }
        Ok(true)
    });
    ToolAttr {
        common: common.finish(),
        args: args_flag.get(),
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
