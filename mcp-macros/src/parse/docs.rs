//! Doc comments as descriptions: an item's description is its `description = "…"`, or else
//! its doc comment.
//!
//! Each `#[doc = …]` line is one piece (joined by `expand` with a `concat!`, so
//! `#[doc = include_str!(…)]` works as well as `///` lines). The single space after `///` is
//! dropped, and leading and trailing blank lines are trimmed.

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

    /// The lines, each a string literal or an expression such as `include_str!(…)`.
    pub(crate) fn pieces(&self) -> &[syn::Expr] {
        &self.pieces
    }
}

/// The description of an item: the attribute's override, or the function's doc comment.
pub(crate) enum Description {
    Override(syn::LitStr),
    Docs(Docs),
}

impl Description {
    pub(crate) fn new(over: Option<syn::LitStr>, attrs: &[syn::Attribute]) -> Description {
        match over {
            Some(lit) => Description::Override(lit),
            None => Description::Docs(Docs::from_attrs(attrs)),
        }
    }

    /// Whether the item has no description: no doc comment and no `description = "…"`.
    pub(crate) fn is_missing(&self) -> bool {
        match self {
            Description::Override(lit) => lit.value().trim().is_empty(),
            Description::Docs(docs) => docs.is_empty(),
        }
    }
}
