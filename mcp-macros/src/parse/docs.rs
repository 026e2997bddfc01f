//! Doc comments as descriptions.
//!
//! Each `#[doc = …]` line becomes one piece of a `concat!`, so `#[doc = include_str!(…)]`
//! works as well as `///` lines. The single space after `///` is dropped, and leading and
//! trailing blank lines are trimmed.

use proc_macro2::TokenStream;
use quote::quote;

/// The doc attributes of an item, as pieces of a description.
pub(crate) struct Docs {
    pieces: Vec<syn::Expr>,
}

impl Docs {
    pub(crate) fn from_attrs(attrs: &[syn::Attribute]) -> Docs {
        let mut pieces: Vec<syn::Expr> = attrs
            .iter()
            .filter(|a| a.path().is_ident("doc"))
            .filter_map(|a| match &a.meta {
                syn::Meta::NameValue(nv) => Some(nv.value.clone()),
                _ => None,
            })
            .map(|expr| match &expr {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => {
                    let text = s.value();
                    let text = text
                        .strip_prefix(' ')
                        .unwrap_or(&text)
                        .trim_end()
                        .to_owned();
                    syn::Expr::Lit(syn::ExprLit {
                        attrs: Vec::new(),
                        lit: syn::Lit::Str(syn::LitStr::new(&text, s.span())),
                    })
                }
                _ => expr,
            })
            .collect();
        let blank = |e: &syn::Expr| matches!(e, syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) if s.value().trim().is_empty());
        while pieces.first().is_some_and(blank) {
            pieces.remove(0);
        }
        while pieces.last().is_some_and(blank) {
            pieces.pop();
        }
        Docs { pieces }
    }

    /// Whether there is no documentation at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// `Some(concat!(…))`, or `None` when there is no documentation.
    pub(crate) fn to_option_tokens(&self) -> TokenStream {
        if self.pieces.is_empty() {
            return quote!(::core::option::Option::None);
        }
        let mut parts = Vec::with_capacity(self.pieces.len() * 2);
        for (i, p) in self.pieces.iter().enumerate() {
            if i > 0 {
                parts.push(quote!("\n"));
            }
            parts.push(quote!(#p));
        }
        quote!(::core::option::Option::Some(::core::concat!(#(#parts),*)))
    }
}
