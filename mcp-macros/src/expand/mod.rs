//! From validated models to tokens: one file per item kind.

pub(crate) mod main;
pub(crate) mod prompt;
pub(crate) mod resource;
pub(crate) mod tool;

use proc_macro2::{Span, TokenStream, TokenTree};

/// With `MCP_MACROS_DEBUG=1` in the environment of the build, prints each expansion to
/// standard error.
pub(crate) fn debug_print(kind: &str, name: &str, tokens: &TokenStream) {
    if std::env::var_os("MCP_MACROS_DEBUG").is_some_and(|v| v != "0") {
        let text = syn::parse2::<syn::File>(tokens.clone())
            .map(|file| quote::quote!(#file).to_string())
            .unwrap_or_else(|_| tokens.to_string());
        eprintln!("// #[{kind}] {name}\n{text}\n");
    }
}

/// On a parse error: the function as it would be without the macro, so the rest of the crate
/// and the IDE keep working, next to every error found.
pub(crate) fn fallback((func, error): (syn::ItemFn, syn::Error)) -> TokenStream {
    let errors = error.into_compile_error();
    quote::quote!(#func #errors)
}

/// The tokens with every span set to `span`. `quote_spanned!` leaves interpolated paths (from
/// `paths`) at the call site, which makes rustc underline the whole attribute as well.
pub(crate) fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            if let TokenTree::Group(group) = &token {
                let mut inner =
                    proc_macro2::Group::new(group.delimiter(), respan(group.stream(), span));
                inner.set_span(span);
                token = TokenTree::Group(inner);
            } else {
                token.set_span(span);
            }
            token
        })
        .collect()
}

/// Reads each parameter of a prompt or resource into a local `__mcp_arg{i}`: a `Context` is
/// cloned, an argument parsed from the text in `source` (a `PromptArguments` expression).
/// Returns the statements and the call's arguments.
pub(crate) fn text_param_reads(
    params: &[crate::parse::signature::TextParam],
    source: &TokenStream,
) -> (Vec<TokenStream>, Vec<proc_macro2::Ident>) {
    use crate::parse::signature::{ParamKind, unraw};
    use quote::{format_ident, quote, quote_spanned};
    use syn::spanned::Spanned;

    let text_argument = crate::paths::text_argument();
    let reads = params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let local = format_ident!("__mcp_arg{i}");
            match p.param.kind {
                ParamKind::Context => quote!(let #local = ::core::clone::Clone::clone(&__mcp_ctx);),
                ParamKind::Argument => {
                    let name = unraw(&p.param.ident);
                    let parsed = &p.parsed;
                    let read = if p.required { quote!(required) } else { quote!(optional) };
                    // Spanned on the parameter's type: a type that cannot be parsed from text
                    // is reported there.
                    let call = quote_spanned!(parsed.span()=> #text_argument::#read::<#parsed, _>(#source, #name));
                    quote!(let #local = #call?;)
                }
            }
        })
        .collect();
    let call_args = (0..params.len())
        .map(|i| format_ident!("__mcp_arg{i}"))
        .collect();
    (reads, call_args)
}
