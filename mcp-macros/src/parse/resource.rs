//! `#[resource("uri", …)]` on a function: the URI written first (its template read by
//! `uri.rs`), the shared keys and the resource's own (`mime`, `size`, `audience`, `priority`,
//! `last_modified`, `list`, `complete`, `cache`), its parameters and its return type.

use proc_macro2::{Span, TokenStream, TokenTree};

use super::Kind;
use super::attr::{Attr, suggestion};
use super::common::{Common, CommonKeys, CompleteEntry, Examples, parse_complete, read_keys};
use super::signature::{
    TextParam, WrittenParams, check_return_type, check_signature, parse_text_params, return_type,
};
use super::uri::{Variable, template_variables};
use super::values::{
    duration_value, int_value, key_text, nested_list, path_text, path_value, skip_value,
    string_value, unit_float_value,
};
use crate::ctxt::Ctxt;

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
    "scopes",
];
const EXAMPLES: Examples = Examples {
    name: "table_ddl",
    title: "Table DDL",
    description: "The DDL of a table.",
    meta: "{\"team\": \"data\"}",
};

/// A `#[resource]` function.
pub(crate) struct ResourceModel {
    pub func: syn::ItemFn,
    /// The URI or URI template; `None` when it is missing (which is reported).
    pub uri: Option<syn::LitStr>,
    /// The template's variables; `None` when the URI is missing or malformed (which is
    /// reported), so which parameters it binds is unknown.
    pub variables: Option<Vec<Variable>>,
    pub common: Common,
    pub mime: Option<syn::LitStr>,
    pub size: Option<syn::LitInt>,
    pub audience: Vec<syn::Ident>,
    pub priority: Option<f64>,
    /// `cache(ttl = "…", public)`: the cache hints of its `resources/read` results.
    pub cache: Option<CacheHint>,
    pub last_modified: Option<syn::LitStr>,
    pub list: Option<syn::Path>,
    pub completions: Vec<CompleteEntry>,
    pub params: Vec<TextParam>,
    /// The parameters as written, before any was rejected.
    pub written: WrittenParams,
    pub return_type: Option<syn::Type>,
}

/// Reads the attribute, the URI template and the function, each on its own.
pub(crate) fn parse(cx: &Ctxt, args: TokenStream, mut func: syn::ItemFn) -> ResourceModel {
    let attr = parse_attr(cx, args);
    let variables = attr
        .uri
        .as_ref()
        .and_then(|uri| template_variables(cx, uri));
    let written = WrittenParams::of(&func.sig);
    check_signature(cx, &mut func.sig, Kind::Resource);
    let params = parse_text_params(cx, &mut func, Kind::Resource);
    check_return_type(cx, &func.sig, Kind::Resource);
    ResourceModel {
        common: Common::new(attr.common, &func),
        return_type: return_type(&func),
        func,
        uri: attr.uri,
        variables,
        mime: attr.mime,
        size: attr.size,
        audience: attr.audience,
        priority: attr.priority,
        cache: attr.cache,
        last_modified: attr.last_modified,
        list: attr.list,
        completions: attr.completions,
        params,
        written,
    }
}

struct ResourceAttr {
    uri: Option<syn::LitStr>,
    common: super::common::CommonAttr,
    mime: Option<syn::LitStr>,
    size: Option<syn::LitInt>,
    audience: Vec<syn::Ident>,
    priority: Option<f64>,
    last_modified: Option<syn::LitStr>,
    list: Option<syn::Path>,
    completions: Vec<CompleteEntry>,
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
    let mut common = CommonKeys::new(cx, &EXAMPLES);
    let mut mime = Attr::none(cx, "mime");
    let mut size = Attr::none(cx, "size");
    let mut priority = Attr::none(cx, "priority");
    let mut last_modified = Attr::none(cx, "last_modified");
    let mut list = Attr::none(cx, "list");
    let mut cache = Attr::none(cx, "cache");
    let mut audience = Vec::new();
    let mut completions = Vec::new();
    read_keys(cx, rest, &mut common, KEYS, |key, meta| {
        match key {
            "mime" => mime.set_read(meta, string_value(cx, meta, "text/plain")?),
            "size" => size.set_read(meta, int_value(cx, meta, "1024")?),
            "priority" => priority.set_read(meta, unit_float_value(cx, meta)?),
            "last_modified" => {
                last_modified.set_read(meta, string_value(cx, meta, "2025-01-12T15:00:58Z")?)
            }
            "list" => list.set_read(meta, path_value(cx, meta, "list_tables")?),
            "audience" => {
                nested_list(cx, meta, "audience(user, assistant)", |role| {
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
            "cache" => cache.set_read(meta, parse_cache(cx, meta)?),
            "complete" => parse_complete(cx, meta, "table", &mut completions)?,
            _ => return Ok(false),
        }
        Ok(true)
    });
    ResourceAttr {
        uri,
        common: common.finish(),
        mime: mime.get(),
        size: size.get(),
        audience,
        priority: priority.get(),
        last_modified: last_modified.get(),
        list: list.get(),
        completions,
        cache: cache.get(),
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
