//! `#[resource("uri", …)]` on a function: the URI or URI template, its variables bound to
//! parameters of the same name, the listing attributes, and the return type.

use proc_macro2::{Span, TokenStream, TokenTree};

use super::extras::{CompleteEntry, Icon, parse_complete, parse_icon};
pub(crate) use super::signature::Description;
use super::signature::{
    Item, Param, ParamKind, check_return_type, check_signature, option_inner, parse_params,
    return_type, unraw,
};
use super::values::{
    int_value, key_text, path_text, path_value, skip_value, string_value, unit_float_value,
};
use super::{Attr, Ctxt, suggestion};

const KEYS: &[&str] = &[
    "name",
    "title",
    "description",
    "mime",
    "size",
    "audience",
    "priority",
    "last_modified",
    "list",
    "complete",
    "icon",
    "meta",
];

/// A validated `#[resource]` function.
pub(crate) struct ResourceModel {
    pub func: syn::ItemFn,
    pub uri: syn::LitStr,
    pub name: String,
    pub title: Option<syn::LitStr>,
    pub description: Description,
    pub mime: Option<syn::LitStr>,
    pub size: Option<syn::LitInt>,
    pub audience: Vec<syn::Ident>,
    pub priority: Option<f64>,
    pub last_modified: Option<syn::LitStr>,
    pub list: Option<syn::Path>,
    pub completions: Vec<CompleteEntry>,
    pub icons: Vec<Icon>,
    pub meta: Option<syn::LitStr>,
    pub params: Vec<VariableParam>,
    pub return_type: Option<syn::Type>,
}

pub(crate) struct VariableParam {
    pub param: Param,
    /// Whether the variable must be bound (its type is not `Option<T>`).
    pub required: bool,
    /// The type the variable's text is parsed into.
    pub parsed: syn::Type,
}

/// One variable of the template, with where it is written.
struct Variable {
    name: String,
    /// A `{?…}` variable, which may be absent.
    query: bool,
    /// Byte range inside the literal's value.
    range: std::ops::Range<usize>,
}

pub(crate) fn parse(
    args: TokenStream,
    mut func: syn::ItemFn,
) -> Result<ResourceModel, Box<(syn::ItemFn, syn::Error)>> {
    let cx = Ctxt::new();
    let attr = parse_attr(&cx, args);
    check_signature(&cx, &mut func.sig, Item::Resource);
    let params: Vec<VariableParam> = parse_params(&cx, &mut func, Item::Resource)
        .into_iter()
        .map(|param| {
            let inner = option_inner(&param.ty).cloned();
            VariableParam {
                required: inner.is_none(),
                parsed: inner.unwrap_or_else(|| param.ty.clone()),
                param,
            }
        })
        .collect();
    check_return_type(&cx, &func.sig.output, Item::Resource);
    let uri = attr
        .uri
        .clone()
        .unwrap_or_else(|| syn::LitStr::new("", Span::call_site()));
    let variables = template_variables(&cx, &uri);
    bind_variables(&cx, &uri, &variables, &params);
    for entry in &attr.completions {
        let argument = unraw(&entry.argument);
        if !variables.iter().any(|v| v.name == argument) {
            let known: Vec<&str> = variables.iter().map(|v| v.name.as_str()).collect();
            cx.error_spanned_by(
                &entry.argument,
                format!(
                    "the URI template has no variable `{argument}` to complete{}",
                    suggestion(&argument, &known)
                ),
            );
        }
    }
    if let Some(list) = &attr.list
        && variables.is_empty()
    {
        cx.error_spanned_by(
            list,
            "`list` belongs to a URI template: a static resource is listed by itself",
        );
    }
    let name = attr
        .name
        .as_ref()
        .map_or_else(|| unraw(&func.sig.ident), syn::LitStr::value);
    let return_type = return_type(&func);
    let description = Description::new(attr.description, &func.attrs);
    match cx.check() {
        Ok(()) => Ok(ResourceModel {
            func,
            uri,
            name,
            title: attr.title,
            description,
            mime: attr.mime,
            size: attr.size,
            audience: attr.audience,
            priority: attr.priority,
            last_modified: attr.last_modified,
            list: attr.list,
            completions: attr.completions,
            icons: attr.icons,
            meta: attr.meta,
            params,
            return_type,
        }),
        Err(e) => Err(Box::new((func, e))),
    }
}

/// Every variable needs a parameter of its name, and every parameter but `Context` a variable.
fn bind_variables(cx: &Ctxt, uri: &syn::LitStr, variables: &[Variable], params: &[VariableParam]) {
    for variable in variables {
        let bound = params.iter().find(|p| {
            p.param.kind == ParamKind::Argument && unraw(&p.param.ident) == variable.name
        });
        match bound {
            None => cx.error_at(
                span_inside(uri, &variable.range),
                format!(
                    "the URI template variable `{}` has no parameter: add `{}: String` (or any type that implements `FromStr`) to the function",
                    variable.name, variable.name
                ),
            ),
            Some(p) if variable.query && p.required => cx.error_spanned_by(
                &p.param.ty,
                format!(
                    "`{}` is a query variable, which a URI may leave out: make its parameter an `Option`",
                    variable.name
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

/// A span inside the literal where rustc can give one (nightly); the whole literal otherwise.
fn span_inside(lit: &syn::LitStr, range: &std::ops::Range<usize>) -> Span {
    // The token includes the opening quote (or `r#"`), so offsets in the value shift by it.
    let token = lit.token().to_string();
    let shift = token.find('"').map_or(0, |q| q + 1);
    lit.token()
        .subspan(range.start + shift..range.end + shift)
        .unwrap_or_else(|| lit.span())
}

/// The variables of a URI template, with every syntax problem reported inside the literal.
fn template_variables(cx: &Ctxt, uri: &syn::LitStr) -> Vec<Variable> {
    let text = uri.value();
    if text.is_empty() {
        cx.error_spanned_by(
            uri,
            "a resource needs a URI: `#[resource(\"file:///notes.txt\")]`",
        );
        return Vec::new();
    }
    let mut variables: Vec<Variable> = Vec::new();
    let mut rest = 0;
    while let Some(found) = text[rest..].find(['{', '}']) {
        let open = rest + found;
        if text.as_bytes()[open] == b'}' {
            cx.error_at(
                span_inside(uri, &(open..open + 1)),
                "`}` without a matching `{` in the URI template",
            );
            return variables;
        }
        let Some(close) = text[open..].find('}').map(|c| open + c) else {
            cx.error_at(
                span_inside(uri, &(open..text.len())),
                "`{` without a matching `}` in the URI template",
            );
            return variables;
        };
        let expression = &text[open + 1..close];
        let (query, names) = match expression.chars().next() {
            Some('?') => (true, &expression[1..]),
            Some('+') => (false, &expression[1..]),
            Some(c) if !(c.is_ascii_alphanumeric() || c == '_') => {
                cx.error_at(
                    span_inside(uri, &(open..close + 1)),
                    format!("the URI template operator `{c}` is not supported; use `{{var}}`, `{{+var}}` or `{{?a,b}}`"),
                );
                rest = close + 1;
                continue;
            }
            _ => (false, expression),
        };
        let names: Vec<&str> = names.split(',').collect();
        if names.len() > 1 && !query {
            cx.error_at(
                span_inside(uri, &(open..close + 1)),
                "only a query expression `{?a,b}` may list several variables",
            );
        }
        for name in names {
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                cx.error_at(
                    span_inside(uri, &(open..close + 1)),
                    format!("`{name}` is not a valid URI template variable name (letters, digits and `_`)"),
                );
                continue;
            }
            if variables.iter().any(|v| v.name == name) {
                cx.error_at(
                    span_inside(uri, &(open..close + 1)),
                    format!("the variable `{name}` appears twice in the URI template"),
                );
                continue;
            }
            variables.push(Variable {
                name: name.to_owned(),
                query,
                range: open..close + 1,
            });
        }
        rest = close + 1;
    }
    variables
}

struct ResourceAttr {
    uri: Option<syn::LitStr>,
    name: Option<syn::LitStr>,
    title: Option<syn::LitStr>,
    description: Option<syn::LitStr>,
    mime: Option<syn::LitStr>,
    size: Option<syn::LitInt>,
    audience: Vec<syn::Ident>,
    priority: Option<f64>,
    last_modified: Option<syn::LitStr>,
    list: Option<syn::Path>,
    completions: Vec<CompleteEntry>,
    icons: Vec<Icon>,
    meta: Option<syn::LitStr>,
}

fn parse_attr(cx: &Ctxt, args: TokenStream) -> ResourceAttr {
    // The URI comes first, as a string literal; the keys follow after a comma.
    let mut tokens = args.into_iter();
    let uri = match tokens.next() {
        Some(TokenTree::Literal(lit)) => {
            match syn::parse2::<syn::LitStr>(TokenTree::Literal(lit.clone()).into()) {
                Ok(s) => Some(s),
                Err(_) => {
                    cx.error_spanned_by(
                        &lit,
                        "the URI must be a string literal: `#[resource(\"file:///notes.txt\")]`",
                    );
                    None
                }
            }
        }
        Some(other) => {
            cx.error_spanned_by(&other, "a resource's first argument is its URI: `#[resource(\"file:///notes.txt\", mime = \"text/plain\")]`");
            None
        }
        None => {
            cx.error_at(
                Span::call_site(),
                "a resource needs a URI: `#[resource(\"file:///notes.txt\")]`",
            );
            None
        }
    };
    let rest: TokenStream = match tokens.next() {
        Some(TokenTree::Punct(p)) if p.as_char() == ',' => tokens.collect(),
        Some(other) => {
            cx.error_spanned_by(&other, "expected `,` after the URI");
            TokenStream::new()
        }
        None => TokenStream::new(),
    };
    let mut name = Attr::none(cx, "name");
    let mut title = Attr::none(cx, "title");
    let mut description = Attr::none(cx, "description");
    let mut mime = Attr::none(cx, "mime");
    let mut size = Attr::none(cx, "size");
    let mut priority = Attr::none(cx, "priority");
    let mut last_modified = Attr::none(cx, "last_modified");
    let mut list = Attr::none(cx, "list");
    let mut meta_json = Attr::none(cx, "meta");
    let mut audience = Vec::new();
    let mut icons = Vec::new();
    let mut completions = Vec::new();
    let parser = syn::meta::parser(|meta| {
        let key = key_text(&meta);
        match key.as_str() {
            "name" => set(&mut name, &meta, string_value(cx, &meta, "table_ddl")?),
            "title" => set(&mut title, &meta, string_value(cx, &meta, "Table DDL")?),
            "description" => set(
                &mut description,
                &meta,
                string_value(cx, &meta, "The DDL of a table.")?,
            ),
            "mime" => set(&mut mime, &meta, string_value(cx, &meta, "text/plain")?),
            "size" => set(&mut size, &meta, int_value(cx, &meta, "1024")?),
            "priority" => set(&mut priority, &meta, unit_float_value(cx, &meta)?),
            "last_modified" => set(
                &mut last_modified,
                &meta,
                string_value(cx, &meta, "2025-01-12T15:00:58Z")?,
            ),
            "list" => set(&mut list, &meta, path_value(cx, &meta, "list_tables")?),
            "meta" => set(
                &mut meta_json,
                &meta,
                string_value(cx, &meta, "{\"team\": \"data\"}")?,
            ),
            "audience" => meta.parse_nested_meta(|role| {
                match role.path.get_ident() {
                    Some(ident) if ident == "user" || ident == "assistant" => {
                        audience.push(ident.clone())
                    }
                    _ => cx.error_spanned_by(
                        &role.path,
                        "the audience is `user`, `assistant`, or both: `audience(user, assistant)`",
                    ),
                }
                Ok(())
            })?,
            "icon" => icons.extend(parse_icon(cx, &meta)?),
            "complete" => parse_complete(cx, &meta, &mut completions)?,
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
    if let Err(e) = syn::parse::Parser::parse2(parser, rest) {
        cx.syn_error(e);
    }
    ResourceAttr {
        uri,
        name: name.get(),
        title: title.get(),
        description: description.get(),
        mime: mime.get(),
        size: size.get(),
        audience,
        priority: priority.get(),
        last_modified: last_modified.get(),
        list: list.get(),
        completions,
        icons,
        meta: meta_json.get(),
    }
}

fn set<T>(slot: &mut Attr<'_, T>, meta: &syn::meta::ParseNestedMeta<'_>, value: Option<T>) {
    if let Some(value) = value {
        slot.set(&meta.path, value);
    }
}
