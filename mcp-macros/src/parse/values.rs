//! Reading the values of attribute keys (`key = "…"`, `key = 0.5`, `key = path`, `flag`,
//! `key(…)`), reporting a wrong value with an example of the right one and skipping it, so the
//! keys after it are still read.

use proc_macro2::TokenStream;
use quote::ToTokens;

use crate::ctxt::Ctxt;

/// The string literal after `key =`.
pub(crate) fn string_value(
    cx: &Ctxt,
    meta: &syn::meta::ParseNestedMeta<'_>,
    example: &str,
) -> syn::Result<Option<syn::LitStr>> {
    let key = path_text(&meta.path);
    if !given_a_value(cx, meta, "a string", &format!("\"{example}\""))? {
        return Ok(None);
    }
    match meta.value()?.parse::<syn::Expr>()? {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(lit),
            ..
        }) => Ok(Some(lit)),
        other => {
            cx.error_spanned_by(
                other,
                format!("`{key}` must be a string literal: `{key} = \"{example}\"`"),
            );
            Ok(None)
        }
    }
}

/// The `true` or `false` after `hint =`.
pub(crate) fn bool_value(
    cx: &Ctxt,
    hint: &syn::meta::ParseNestedMeta<'_>,
) -> syn::Result<Option<bool>> {
    match hint.value()?.parse::<syn::Expr>()? {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Bool(lit),
            ..
        }) => Ok(Some(lit.value)),
        other => {
            let key = path_text(&hint.path);
            cx.error_spanned_by(
                other,
                format!("`{key}` must be `true` or `false`, or given alone to mean `true`"),
            );
            Ok(None)
        }
    }
}

/// The integer literal after `key =`.
pub(crate) fn int_value(
    cx: &Ctxt,
    meta: &syn::meta::ParseNestedMeta<'_>,
    example: &str,
) -> syn::Result<Option<syn::LitInt>> {
    let key = path_text(&meta.path);
    if !given_a_value(cx, meta, "a whole number", example)? {
        return Ok(None);
    }
    match meta.value()?.parse::<syn::Expr>()? {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(lit),
            ..
        }) if lit.base10_parse::<u64>().is_ok() => Ok(Some(lit)),
        other => {
            cx.error_spanned_by(
                other,
                format!("`{key}` must be a whole number: `{key} = {example}`"),
            );
            Ok(None)
        }
    }
}

/// The duration after `key =`, written `"250ms"`, `"30s"`, `"5m"` or `"1h"`, in
/// milliseconds; zero only with `allow_zero` (a cache time of zero: not cached).
pub(crate) fn duration_value(
    cx: &Ctxt,
    meta: &syn::meta::ParseNestedMeta<'_>,
    example: &str,
    allow_zero: bool,
) -> syn::Result<Option<u64>> {
    let key = path_text(&meta.path);
    let Some(lit) = string_value(cx, meta, example)? else {
        return Ok(None);
    };
    match parse_duration(&lit.value()) {
        Some(0) if !allow_zero => {
            cx.error_spanned_by(
                &lit,
                format!("`{key}` must be longer than zero: `{key} = \"{example}\"`"),
            );
            Ok(None)
        }
        Some(ms) => Ok(Some(ms)),
        None => {
            cx.error_spanned_by(
                &lit,
                format!(
                    "`{key}` must be a whole number with a unit, `ms`, `s`, `m` or `h`: `{key} = \"{example}\"`"
                ),
            );
            Ok(None)
        }
    }
}

/// `"250ms"`, `"30s"`, `"5m"`, `"1h"` in milliseconds.
pub(crate) fn parse_duration(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit())?;
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().ok()?;
    let scale = match unit.trim() {
        "ms" => 1,
        "s" => 1_000,
        "m" | "min" => 60_000,
        "h" => 3_600_000,
        _ => return None,
    };
    number.checked_mul(scale)
}

/// The number from 0 to 1 after `key =`.
pub(crate) fn unit_float_value(
    cx: &Ctxt,
    meta: &syn::meta::ParseNestedMeta<'_>,
) -> syn::Result<Option<f64>> {
    let key = path_text(&meta.path);
    if !given_a_value(cx, meta, "a number from 0 to 1", "0.5")? {
        return Ok(None);
    }
    let expr = meta.value()?.parse::<syn::Expr>()?;
    let value = match &expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Float(f),
            ..
        }) => f.base10_parse::<f64>().ok(),
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse::<f64>().ok(),
        _ => None,
    };
    match value {
        Some(v) if (0.0..=1.0).contains(&v) => Ok(Some(v)),
        _ => {
            cx.error_spanned_by(
                expr,
                format!("`{key}` must be a number from 0 to 1: `{key} = 0.5`"),
            );
            Ok(None)
        }
    }
}

/// The path after `key =` (a function).
pub(crate) fn path_value(
    cx: &Ctxt,
    meta: &syn::meta::ParseNestedMeta<'_>,
    example: &str,
) -> syn::Result<Option<syn::Path>> {
    let key = path_text(&meta.path);
    if !meta.input.peek(syn::Token![=]) {
        cx.error_spanned_by(
            &meta.path,
            format!("`{key}` must name a function: `{key} = {example}`"),
        );
        skip_value(meta)?;
        return Ok(None);
    }
    match meta.value()?.parse::<syn::Expr>()? {
        syn::Expr::Path(p) if p.qself.is_none() => Ok(Some(p.path)),
        other => {
            cx.error_spanned_by(
                other,
                format!("`{key}` must name a function: `{key} = {example}`"),
            );
            Ok(None)
        }
    }
}

/// Whether `key =` follows; if not, reports that the key needs a value and skips what is there.
fn given_a_value(
    cx: &Ctxt,
    meta: &syn::meta::ParseNestedMeta<'_>,
    what: &str,
    example: &str,
) -> syn::Result<bool> {
    if meta.input.peek(syn::Token![=]) {
        return Ok(true);
    }
    let key = path_text(&meta.path);
    cx.error_spanned_by(
        &meta.path,
        format!("`{key}` must be given {what}: `{key} = {example}`"),
    );
    skip_value(meta)?;
    Ok(false)
}

/// Reads the list of `key(…)` with `logic`; false when the key was given no list, which is
/// reported with an example and skipped. An empty list `key()` is read as no entries (syn
/// would reject it as "expected nested attribute"), for the caller to report what is missing.
pub(crate) fn nested_list(
    cx: &Ctxt,
    meta: &syn::meta::ParseNestedMeta<'_>,
    example: &str,
    logic: impl FnMut(syn::meta::ParseNestedMeta<'_>) -> syn::Result<()>,
) -> syn::Result<bool> {
    if !meta.input.peek(syn::token::Paren) {
        let key = path_text(&meta.path);
        let value = skip_value(meta)?;
        let message = format!("`{key}` takes a list in parentheses: `{example}`");
        if value.is_empty() {
            cx.error_spanned_by(&meta.path, message);
        } else {
            cx.error_spanned_by(value, message);
        }
        return Ok(false);
    }
    let fork = meta.input.fork();
    let content;
    syn::parenthesized!(content in fork);
    if content.is_empty() {
        syn::parse::discouraged::Speculative::advance_to(meta.input, &fork);
        return Ok(true);
    }
    meta.parse_nested_meta(logic)?;
    Ok(true)
}

/// Skips what follows a key (`= value` or `(…)`), and returns it for error spans.
pub(crate) fn skip_value(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<TokenStream> {
    if meta.input.peek(syn::Token![=]) {
        let eq: syn::Token![=] = meta.input.parse()?;
        let value: syn::Expr = meta.input.parse()?;
        let mut tokens = eq.into_token_stream();
        value.to_tokens(&mut tokens);
        Ok(tokens)
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        let paren = syn::parenthesized!(content in meta.input);
        let inner: TokenStream = content.parse()?;
        let mut tokens = TokenStream::new();
        paren.surround(&mut tokens, |t| t.extend(inner));
        Ok(tokens)
    } else {
        Ok(TokenStream::new())
    }
}

/// A path as written, without spaces (`a::b`), for messages.
pub(crate) fn path_text(path: &syn::Path) -> String {
    path.to_token_stream().to_string().replace(' ', "")
}

/// The key of a nested meta item as text (empty for a path that is not one identifier).
pub(crate) fn key_text(meta: &syn::meta::ParseNestedMeta<'_>) -> String {
    meta.path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::parse_duration;

    #[test]
    fn durations_have_a_unit() {
        assert_eq!(parse_duration("250ms"), Some(250));
        assert_eq!(parse_duration("30s"), Some(30_000));
        assert_eq!(parse_duration("5m"), Some(300_000));
        assert_eq!(parse_duration("1h"), Some(3_600_000));
        assert_eq!(parse_duration("30"), None);
        assert_eq!(parse_duration("s"), None);
        assert_eq!(parse_duration("1.5s"), None);
    }
}
