//! Reading an item attribute's `key = value` list: one loop for `#[tool]`, `#[prompt]` and
//! `#[resource]` ([`read_keys`]), one parser for the keys they share — `name`, `title`,
//! `description`, `icon(…)` and `meta` — and `complete(…)`, which prompts and resources share.

use proc_macro2::TokenStream;

use super::attr::{Attr, suggestion};
use super::docs::Description;
use super::signature::unraw;
use super::values::{key_text, nested_list, path_text, path_value, skip_value, string_value};
use crate::ctxt::Ctxt;

/// Reads the keys of an item attribute: the shared ones into `common`, the item's own with
/// `own` (which answers whether it knew the key), and every other key reported as unknown,
/// with the closest of `known`.
pub(crate) fn read_keys(
    cx: &Ctxt,
    args: TokenStream,
    common: &mut CommonKeys<'_>,
    known: &[&str],
    mut own: impl FnMut(&str, &syn::meta::ParseNestedMeta<'_>) -> syn::Result<bool>,
) {
    let parser = syn::meta::parser(|meta| {
        let key = key_text(&meta);
        if common.read(&key, &meta)? || own(&key, &meta)? {
            return Ok(());
        }
        skip_value(&meta)?;
        cx.error_spanned_by(
            &meta.path,
            format!(
                "unknown attribute `{}`{}",
                path_text(&meta.path),
                suggestion(&key, known)
            ),
        );
        Ok(())
    });
    if let Err(e) = syn::parse::Parser::parse2(parser, args) {
        cx.syn_error(e);
    }
}

/// The examples an item kind's messages give for the shared keys.
pub(crate) struct Examples {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub meta: &'static str,
}

/// The shared keys as they are read.
pub(crate) struct CommonKeys<'c> {
    cx: &'c Ctxt,
    examples: &'static Examples,
    name: Attr<'c, syn::LitStr>,
    title: Attr<'c, syn::LitStr>,
    description: Attr<'c, syn::LitStr>,
    meta: Attr<'c, syn::LitStr>,
    icons: Vec<Icon>,
    scopes: Vec<syn::LitStr>,
}

impl<'c> CommonKeys<'c> {
    pub(crate) fn new(cx: &'c Ctxt, examples: &'static Examples) -> Self {
        CommonKeys {
            cx,
            examples,
            name: Attr::none(cx, "name"),
            title: Attr::none(cx, "title"),
            description: Attr::none(cx, "description"),
            meta: Attr::none(cx, "meta"),
            icons: Vec::new(),
            scopes: Vec::new(),
        }
    }

    /// Reads `key` if it is one of the shared keys; false if it is not.
    pub(crate) fn read(
        &mut self,
        key: &str,
        meta: &syn::meta::ParseNestedMeta<'_>,
    ) -> syn::Result<bool> {
        let (slot, example) = match key {
            "name" => (&mut self.name, self.examples.name),
            "title" => (&mut self.title, self.examples.title),
            "description" => (&mut self.description, self.examples.description),
            "meta" => (&mut self.meta, self.examples.meta),
            "icon" => {
                self.icons.extend(parse_icon(self.cx, meta)?);
                return Ok(true);
            }
            "scopes" => {
                parse_scopes(self.cx, meta, &mut self.scopes)?;
                return Ok(true);
            }
            _ => return Ok(false),
        };
        slot.set_read(meta, string_value(self.cx, meta, example)?);
        Ok(true)
    }

    pub(crate) fn finish(self) -> CommonAttr {
        CommonAttr {
            name: self.name.get(),
            title: self.title.get(),
            description: self.description.get(),
            meta: self.meta.get(),
            icons: self.icons,
            scopes: self.scopes,
        }
    }
}

/// The shared keys as written.
pub(crate) struct CommonAttr {
    pub name: Option<syn::LitStr>,
    pub title: Option<syn::LitStr>,
    pub description: Option<syn::LitStr>,
    pub meta: Option<syn::LitStr>,
    pub icons: Vec<Icon>,
    pub scopes: Vec<syn::LitStr>,
}

/// What every item's descriptor has.
pub(crate) struct Common {
    /// The name on the wire: `name = "…"`, or the function's name.
    pub name: String,
    pub title: Option<syn::LitStr>,
    /// `description = "…"`, or the function's doc comment.
    pub description: Description,
    pub icons: Vec<Icon>,
    /// `meta = "{…}"`: `_meta`, as the text of a JSON object.
    pub meta: Option<syn::LitStr>,
    /// `scopes("notes:write", …)`: what a caller's token must grant.
    pub scopes: Vec<String>,
}

impl Common {
    pub(crate) fn new(attr: CommonAttr, func: &syn::ItemFn) -> Common {
        Common {
            name: attr
                .name
                .as_ref()
                .map_or_else(|| unraw(&func.sig.ident), syn::LitStr::value),
            title: attr.title,
            description: Description::new(attr.description, &func.attrs),
            icons: attr.icons,
            meta: attr.meta,
            scopes: attr.scopes.iter().map(syn::LitStr::value).collect(),
        }
    }
}

const SCOPES_EXAMPLE: &str = "scopes(\"notes:read\", \"notes:write\")";

/// Reads `scopes("a", "b")`: OAuth scope tokens (RFC 6749 §3.3: printable ASCII but space,
/// `"` and `\\`), each once.
fn parse_scopes(
    cx: &Ctxt,
    meta: &syn::meta::ParseNestedMeta<'_>,
    into: &mut Vec<syn::LitStr>,
) -> syn::Result<()> {
    if !meta.input.peek(syn::token::Paren) {
        let value = skip_value(meta)?;
        let message = format!("`scopes` takes a list of scopes in parentheses: `{SCOPES_EXAMPLE}`");
        if value.is_empty() {
            cx.error_spanned_by(&meta.path, message);
        } else {
            cx.error_spanned_by(value, message);
        }
        return Ok(());
    }
    let content;
    syn::parenthesized!(content in meta.input);
    let listed =
        syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated(&content)?;
    for expr in listed {
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(lit),
            ..
        }) = expr
        else {
            cx.error_spanned_by(
                &expr,
                format!("a scope is a string literal: `{SCOPES_EXAMPLE}`"),
            );
            continue;
        };
        let scope = lit.value();
        let bad = scope
            .chars()
            .find(|c| !matches!(*c, '\u{21}' | '\u{23}'..='\u{5B}' | '\u{5D}'..='\u{7E}'));
        if scope.is_empty() {
            cx.error_spanned_by(&lit, "a scope cannot be empty");
        } else if let Some(c) = bad {
            cx.error_spanned_by(
                &lit,
                format!(
                    "`{}` cannot be in an OAuth scope (printable ASCII but space, `\"` and `\\`); give several scopes as several strings",
                    c.escape_default()
                ),
            );
        } else if into.iter().any(|l| l.value() == scope) {
            cx.error_spanned_by(&lit, format!("the scope `{scope}` is given twice"));
        } else {
            into.push(lit);
        }
    }
    Ok(())
}

/// `icon(src = "…", mime = "…", sizes = "48x48 96x96")`.
pub(crate) struct Icon {
    pub src: syn::LitStr,
    pub mime: Option<syn::LitStr>,
    pub sizes: Vec<String>,
}

const ICON_EXAMPLE: &str = "icon(src = \"https://example.com/icon.png\")";

/// Reads one `icon(…)`.
fn parse_icon(cx: &Ctxt, meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<Option<Icon>> {
    let mut src = None;
    let mut mime = None;
    let mut sizes = Vec::new();
    let listed = nested_list(cx, meta, ICON_EXAMPLE, |inner| {
        match key_text(&inner).as_str() {
            "src" => src = string_value(cx, &inner, "https://example.com/icon.png")?,
            "mime" => mime = string_value(cx, &inner, "image/png")?,
            "sizes" => {
                if let Some(lit) = string_value(cx, &inner, "48x48")? {
                    sizes = lit.value().split_whitespace().map(str::to_owned).collect();
                }
            }
            key => {
                skip_value(&inner)?;
                cx.error_spanned_by(
                    &inner.path,
                    format!(
                        "unknown icon key `{}`{}",
                        path_text(&inner.path),
                        suggestion(key, &["src", "mime", "sizes"])
                    ),
                );
            }
        }
        Ok(())
    })?;
    if listed && src.is_none() {
        cx.error_spanned_by(
            &meta.path,
            format!("an icon needs a source: `{ICON_EXAMPLE}`"),
        );
    }
    Ok(src.map(|src| Icon { src, mime, sizes }))
}

/// One `argument = function` of `complete(…)`.
pub(crate) struct CompleteEntry {
    pub argument: syn::Ident,
    pub function: syn::Path,
}

/// Reads `complete(argument = function, …)`; `example` names an argument of the item kind
/// (`language` for a prompt, `table` for a resource).
pub(crate) fn parse_complete(
    cx: &Ctxt,
    meta: &syn::meta::ParseNestedMeta<'_>,
    example: &str,
    into: &mut Vec<CompleteEntry>,
) -> syn::Result<()> {
    let function_example = format!("complete_{example}");
    let list_example = format!("complete({example} = {function_example})");
    nested_list(cx, meta, &list_example, |inner| {
        let Some(argument) = inner.path.get_ident().cloned() else {
            skip_value(&inner)?;
            cx.error_spanned_by(&inner.path, format!("name one argument: `{list_example}`"));
            return Ok(());
        };
        if let Some(function) = path_value(cx, &inner, &function_example)? {
            if into.iter().any(|e| e.argument == argument) {
                cx.error_spanned_by(&argument, format!("duplicate completion for `{argument}`"));
            }
            into.push(CompleteEntry { argument, function });
        }
        Ok(())
    })?;
    Ok(())
}
