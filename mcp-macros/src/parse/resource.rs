//! `#[resource("uri", …)]` on a function: the URI or URI template, its variables bound to
//! parameters of the same name, the listing attributes, and the return type.

use proc_macro2::{Span, TokenStream, TokenTree};

use super::extras::{CompleteEntry, Icon, parse_complete, parse_icon};
pub(crate) use super::signature::Description;
use super::signature::{
    Item, ParamKind, TextParam, WrittenParams, check_return_type, check_signature,
    parse_text_params, return_type, unraw,
};
use super::values::{
    duration_value, int_value, key_text, nested_list, path_text, path_value, skip_value,
    string_value, unit_float_value,
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
    "cache",
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
    /// `cache(ttl = "…", public)`: the cache hints of its `resources/read` results.
    pub cache: Option<CacheHint>,
    pub last_modified: Option<syn::LitStr>,
    pub list: Option<syn::Path>,
    pub completions: Vec<CompleteEntry>,
    pub icons: Vec<Icon>,
    pub meta: Option<syn::LitStr>,
    pub params: Vec<TextParam>,
    pub return_type: Option<syn::Type>,
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
    // `None` when the URI is missing or malformed (already reported): then which parameters
    // it binds is unknown, and checking them would only add confusing errors.
    let variables = attr
        .uri
        .as_ref()
        .and_then(|uri| template_variables(&cx, uri));
    let written = WrittenParams::of(&func.sig);
    check_signature(&cx, &mut func.sig, Item::Resource);
    let params = parse_text_params(&cx, &mut func, Item::Resource);
    check_return_type(&cx, &func.sig, Item::Resource);
    if let (Some(uri), Some(variables)) = (&attr.uri, &variables) {
        bind_variables(&cx, uri, variables, &params, &written);
        check_completions(&cx, &attr.completions, variables);
        if let Some(list) = &attr.list
            && variables.is_empty()
        {
            cx.error_spanned_by(
                list,
                "`list` belongs to a URI template: a static resource is listed by itself; remove `list`, or add a `{variable}` to the URI",
            );
        }
    }
    let name = attr
        .name
        .as_ref()
        .map_or_else(|| unraw(&func.sig.ident), syn::LitStr::value);
    let return_type = return_type(&func);
    let description = Description::new(attr.description, &func.attrs);
    match (cx.check(), attr.uri) {
        (Ok(()), Some(uri)) => Ok(ResourceModel {
            func,
            uri,
            name,
            title: attr.title,
            description,
            mime: attr.mime,
            size: attr.size,
            audience: attr.audience,
            priority: attr.priority,
            cache: attr.cache,
            last_modified: attr.last_modified,
            list: attr.list,
            completions: attr.completions,
            icons: attr.icons,
            meta: attr.meta,
            params,
            return_type,
        }),
        // A missing URI is always reported, so the second case cannot happen; it is not worth
        // a panic in the compiler.
        (result, _) => {
            let e = result
                .err()
                .unwrap_or_else(|| syn::Error::new(Span::call_site(), "a resource needs a URI"));
            Err(Box::new((func, e)))
        }
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

/// The parameter that binds a variable: `r#type` for `{type}`.
fn parameter_name(variable: &str) -> String {
    if syn::parse_str::<syn::Ident>(variable).is_ok() {
        variable.to_owned()
    } else {
        format!("r#{variable}")
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

/// The variables of a URI template, with every syntax problem reported inside the literal;
/// `None` when there was one. Accepts what `mcp_runtime::UriTemplate::parse` accepts, with
/// names that can be parameters, so a template that compiles also builds.
fn template_variables(cx: &Ctxt, uri: &syn::LitStr) -> Option<Vec<Variable>> {
    let text = uri.value();
    if text.is_empty() {
        cx.error_spanned_by(
            uri,
            "a resource needs a URI: `#[resource(\"file:///notes.txt\")]`",
        );
        return None;
    }
    let mut variables: Vec<Variable> = Vec::new();
    let mut well_formed = true;
    let mut error = |range: std::ops::Range<usize>, message: String| {
        cx.error_at(span_inside(uri, &range), message);
        well_formed = false;
    };
    let mut rest = 0;
    // Where the previous `{var}` or `{+var}` ended, to find two with no text between.
    let mut previous_path_end = None;
    while let Some(found) = text[rest..].find(['{', '}']) {
        let open = rest + found;
        if text.as_bytes()[open] == b'}' {
            error(
                open..open + 1,
                "`}` without a matching `{` in the URI template".to_owned(),
            );
            return None;
        }
        let Some(close) = text[open..].find('}').map(|c| open + c) else {
            error(
                open..text.len(),
                "`{` without a matching `}` in the URI template".to_owned(),
            );
            return None;
        };
        let range = open..close + 1;
        let written = &text[range.clone()];
        rest = close + 1;
        let expression = &text[open + 1..close];
        let (query, names) = match expression.chars().next() {
            None => {
                error(
                    range,
                    "an empty expression `{}` in the URI template: name a variable, as in `{table}`"
                        .to_owned(),
                );
                continue;
            }
            Some('?') => (true, &expression[1..]),
            Some('+') => (false, &expression[1..]),
            Some(c) if !(c.is_ascii_alphanumeric() || c == '_') => {
                error(
                    range,
                    format!(
                        "the URI template operator `{c}` in `{written}` is not supported; use `{{var}}`, `{{+var}}` or `{{?a,b}}`"
                    ),
                );
                continue;
            }
            _ => (false, expression),
        };
        if query && close + 1 != text.len() {
            error(
                range.clone(),
                format!("the query expression `{written}` must end the URI template"),
            );
        }
        if !query {
            if previous_path_end == Some(open) {
                error(
                    range.clone(),
                    format!(
                        "`{written}` follows another variable directly: separate them with literal text, as in `{{a}}/{{b}}`, so a URI can be split between them"
                    ),
                );
            }
            previous_path_end = Some(close + 1);
        }
        let names: Vec<&str> = names.split(',').collect();
        if names.len() > 1 && !query {
            error(
                range.clone(),
                format!(
                    "`{written}` lists several variables, which only a query expression `{{?a,b}}` may do"
                ),
            );
        }
        for name in names {
            if name.is_empty() {
                error(
                    range.clone(),
                    format!("a variable name is missing in `{written}`"),
                );
                continue;
            }
            if let Err(problem) = check_variable_name(name) {
                error(range.clone(), problem);
                continue;
            }
            if variables.iter().any(|v| v.name == name) {
                error(
                    range.clone(),
                    format!("the variable `{name}` appears twice in the URI template"),
                );
                continue;
            }
            variables.push(Variable {
                name: name.to_owned(),
                query,
                range: range.clone(),
            });
        }
    }
    well_formed.then_some(variables)
}

/// A variable names a parameter: ASCII letters, digits and `_`, not starting with a digit.
fn check_variable_name(name: &str) -> Result<(), String> {
    let valid = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    if valid {
        return Ok(());
    }
    let mut fixed: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if fixed.starts_with(|c: char| c.is_ascii_digit()) {
        fixed.insert(0, '_');
    }
    Err(format!(
        "`{name}` is not a valid URI template variable name: it is the name of a parameter, so use ASCII letters, digits and `_`, not starting with a digit: `{{{fixed}}}`"
    ))
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
    cache: Option<CacheHint>,
}

/// The cache hints of a resource's reads (2026-07-28 `ttlMs` and `cacheScope`).
#[derive(Clone, Copy)]
pub(crate) struct CacheHint {
    pub ttl_ms: u64,
    pub public: bool,
}

/// `cache(ttl = "5m")`, `cache(ttl = "1h", public)`: private unless `public` is given.
fn parse_cache(cx: &Ctxt, meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<Option<CacheHint>> {
    let mut ttl = Attr::none(cx, "ttl");
    let mut scope = Attr::none(cx, "public");
    let mut ttl_written = false;
    nested_list(cx, meta, "cache(ttl = \"5m\", public)", |item| {
        match key_text(&item).as_str() {
            "ttl" => {
                ttl_written = true;
                if let Some(ms) = duration_value(cx, &item, "5m", true)? {
                    ttl.set(&item.path, ms);
                }
            }
            word @ ("public" | "private") => {
                skip_value(&item)?;
                scope.set(&item.path, word == "public");
            }
            other => {
                skip_value(&item)?;
                cx.error_spanned_by(
                    &item.path,
                    format!(
                        "unknown cache setting `{other}`{}",
                        suggestion(other, &["ttl", "public", "private"])
                    ),
                );
            }
        }
        Ok(())
    })?;
    let public = scope.get().unwrap_or(false);
    match ttl.get() {
        Some(ttl_ms) => Ok(Some(CacheHint { ttl_ms, public })),
        // A `ttl` that is there but wrong was reported already.
        None if ttl_written => Ok(None),
        None => {
            cx.error_spanned_by(
                &meta.path,
                "`cache` needs how long a read stays fresh: `cache(ttl = \"5m\")`, `cache(ttl = \"1h\", public)`",
            );
            Ok(None)
        }
    }
}

fn parse_attr(cx: &Ctxt, args: TokenStream) -> ResourceAttr {
    let (uri, rest) = split_uri(cx, args);
    let mut name = Attr::none(cx, "name");
    let mut title = Attr::none(cx, "title");
    let mut description = Attr::none(cx, "description");
    let mut mime = Attr::none(cx, "mime");
    let mut size = Attr::none(cx, "size");
    let mut priority = Attr::none(cx, "priority");
    let mut last_modified = Attr::none(cx, "last_modified");
    let mut list = Attr::none(cx, "list");
    let mut meta_json = Attr::none(cx, "meta");
    let mut cache = Attr::none(cx, "cache");
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
            "audience" => {
                nested_list(cx, &meta, "audience(user, assistant)", |role| {
                    skip_value(&role)?;
                    match role.path.get_ident() {
                        Some(ident) if audience.contains(ident) => cx.error_spanned_by(
                            ident,
                            format!("duplicate audience `{ident}`"),
                        ),
                        Some(ident) if ident == "user" || ident == "assistant" => {
                            audience.push(ident.clone())
                        }
                        _ => cx.error_spanned_by(
                            &role.path,
                            format!(
                                "the audience is `user`, `assistant`, or both: `audience(user, assistant)`, not `{}`",
                                path_text(&role.path)
                            ),
                        ),
                    }
                    Ok(())
                })?;
            }
            "icon" => icons.extend(parse_icon(cx, &meta)?),
            "cache" => set(&mut cache, &meta, parse_cache(cx, &meta)?),
            "complete" => parse_complete(cx, &meta, "table", &mut completions)?,
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
        cache: cache.get(),
    }
}

fn set<T>(slot: &mut Attr<'_, T>, meta: &syn::meta::ParseNestedMeta<'_>, value: Option<T>) {
    if let Some(value) = value {
        slot.set(&meta.path, value);
    }
}

const URI_EXAMPLE: &str = "#[resource(\"file:///notes.txt\", mime = \"text/plain\")]";

/// The URI, which comes first as a string literal, and the keys after it. A URI written
/// elsewhere is reported where it is and still used, so the template and keys are checked too.
fn split_uri(cx: &Ctxt, args: TokenStream) -> (Option<syn::LitStr>, TokenStream) {
    let tokens: Vec<TokenTree> = args.into_iter().collect();
    let string = |token: &TokenTree| match token {
        TokenTree::Literal(lit) => syn::parse2::<syn::LitStr>(token.clone().into())
            .map_err(|_| lit.clone())
            .map(Some),
        _ => Ok(None),
    };
    let is_comma = |token: Option<&TokenTree>| matches!(token, Some(TokenTree::Punct(p)) if p.as_char() == ',');
    let Some(first) = tokens.first() else {
        cx.error_at(
            Span::call_site(),
            format!("a resource needs a URI: `{URI_EXAMPLE}`"),
        );
        return (None, TokenStream::new());
    };
    match string(first) {
        Ok(Some(uri)) => {
            let rest = match tokens.get(1) {
                None => &[][..],
                Some(_) if is_comma(tokens.get(1)) => &tokens[2..],
                Some(other) => {
                    cx.error_spanned_by(other, "expected `,` after the URI");
                    &tokens[1..]
                }
            };
            return (Some(uri), rest.iter().cloned().collect());
        }
        Err(lit) => {
            cx.error_spanned_by(
                &lit,
                format!("the URI must be a string literal: `{URI_EXAMPLE}`"),
            );
            let rest = if is_comma(tokens.get(1)) {
                &tokens[2..]
            } else {
                &tokens[1..]
            };
            return (None, rest.iter().cloned().collect());
        }
        Ok(None) => {}
    }
    // `uri = "…"`, as if the URI were a key.
    if let [TokenTree::Ident(key), TokenTree::Punct(eq), value, ..] = &tokens[..]
        && key == "uri"
        && eq.as_char() == '='
        && let Ok(Some(uri)) = string(value)
    {
        cx.error_spanned_by(
            key,
            format!("the URI is written first, alone, not as `uri = …`: `{URI_EXAMPLE}`"),
        );
        let rest = if is_comma(tokens.get(3)) {
            &tokens[4..]
        } else {
            &tokens[3..]
        };
        return (Some(uri), rest.iter().cloned().collect());
    }
    // The URI after some keys: `#[resource(mime = "text/plain", "file:///notes.txt")]`.
    let later = (1..tokens.len())
        .find(|&i| is_comma(tokens.get(i - 1)) && matches!(string(&tokens[i]), Ok(Some(_))));
    if let Some(i) = later {
        cx.error_spanned_by(
            &tokens[i],
            format!("the URI comes first, before the keys: `{URI_EXAMPLE}`"),
        );
        let uri = string(&tokens[i]).ok().flatten();
        let rest = tokens[..i - 1]
            .iter()
            .chain(&tokens[i + 1..])
            .cloned()
            .collect();
        return (uri, rest);
    }
    cx.error_spanned_by(
        first,
        format!("a resource's first argument is its URI: `{URI_EXAMPLE}`"),
    );
    (None, tokens.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variable_name_must_be_able_to_name_a_parameter() {
        assert!(check_variable_name("table_2").is_ok());
        let problem = check_variable_name("table-name").unwrap_err();
        assert!(problem.contains("`{table_name}`"), "{problem}");
        let problem = check_variable_name("2nd").unwrap_err();
        assert!(problem.contains("`{_2nd}`"), "{problem}");
    }

    #[test]
    fn a_keyword_variable_binds_a_raw_parameter() {
        assert_eq!(parameter_name("table"), "table");
        assert_eq!(parameter_name("type"), "r#type");
    }
}
