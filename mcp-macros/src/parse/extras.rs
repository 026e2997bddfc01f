//! Keys every item accepts beyond its own: `icon(…)`, `meta = "…"` and `complete(…)`.

use proc_macro2::TokenStream;
use quote::quote;

use super::values::{key_text, nested_list, path_text, path_value, skip_value, string_value};
use super::{Ctxt, suggestion};
use crate::paths;

/// `icon(src = "…", mime = "…", sizes = "48x48 96x96")`.
pub(crate) struct Icon {
    src: syn::LitStr,
    mime: Option<syn::LitStr>,
    sizes: Vec<String>,
}

const ICON_EXAMPLE: &str = "icon(src = \"https://example.com/icon.png\")";

/// Reads one `icon(…)`.
pub(crate) fn parse_icon(
    cx: &Ctxt,
    meta: &syn::meta::ParseNestedMeta<'_>,
) -> syn::Result<Option<Icon>> {
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

/// The icons as a `&'static [Icon]` expression.
pub(crate) fn icons_tokens(icons: &[Icon]) -> TokenStream {
    let icon = paths::icon();
    let items = icons.iter().map(|i| {
        let src = &i.src;
        let mime = match &i.mime {
            Some(m) => quote!(::core::option::Option::Some(#m)),
            None => quote!(::core::option::Option::None),
        };
        let sizes = &i.sizes;
        quote!(#icon { src: #src, mime_type: #mime, sizes: &[#(#sizes),*] })
    });
    quote!(&[#(#items),*])
}

/// `meta = "{…}"` as an `Option<&'static str>` expression.
pub(crate) fn meta_tokens(meta: Option<&syn::LitStr>) -> TokenStream {
    match meta {
        Some(m) => quote!(::core::option::Option::Some(#m)),
        None => quote!(::core::option::Option::None),
    }
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

/// The completions as a `&'static [CompletionDescriptor]` expression, with one shim function
/// per entry (emitted into `items`).
pub(crate) fn completions_tokens(
    entries: &[CompleteEntry],
    items: &mut TokenStream,
) -> TokenStream {
    let descriptor = paths::completion_descriptor();
    let completer = paths::completer();
    let context = paths::completion_context();
    let completion = paths::completion();
    let list = entries.iter().enumerate().map(|(i, e)| {
        let shim = quote::format_ident!("__mcp_complete_{i}");
        let function = &e.function;
        let argument = super::signature::unraw(&e.argument);
        // Every token of the call is on the function's path, so an unfit function is reported
        // there alone, not also on the whole attribute.
        let call = crate::expand::respan(
            quote!(#completer::complete(&#function, context)),
            syn::spanned::Spanned::span(function),
        );
        items.extend(quote! {
            fn #shim(context: &#context) -> #completion {
                #call
            }
        });
        quote!(#descriptor { argument: #argument, complete: #shim })
    });
    quote!(&[#(#list),*])
}
