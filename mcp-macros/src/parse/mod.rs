//! From tokens to a validated model of each item. Nothing here emits code: every problem is
//! collected, with its span, in a [`Ctxt`], and all of them are reported together.

pub(crate) mod docs;
pub(crate) mod extras;
pub(crate) mod prompt;
pub(crate) mod resource;
pub(crate) mod signature;
pub(crate) mod tool;
pub(crate) mod values;

use std::cell::RefCell;
use std::fmt::Display;

use quote::ToTokens;

/// The function an item attribute is written on; anything else is reported at its keyword,
/// saying what the attribute applies to, and emitted again unchanged.
pub(crate) fn function(
    item: proc_macro2::TokenStream,
    attribute: &str,
    applies_to: &str,
) -> Result<syn::ItemFn, proc_macro2::TokenStream> {
    let item = match syn::parse2::<syn::Item>(item.clone()) {
        Ok(syn::Item::Fn(func)) => return Ok(func),
        Ok(item) => item,
        Err(e) => {
            let error = e.into_compile_error();
            return Err(quote::quote!(#item #error));
        }
    };
    let (what, at): (&str, proc_macro2::TokenStream) = match &item {
        syn::Item::Struct(i) => ("a struct", i.struct_token.to_token_stream()),
        syn::Item::Enum(i) => ("an enum", i.enum_token.to_token_stream()),
        syn::Item::Const(i) => ("a constant", i.const_token.to_token_stream()),
        syn::Item::Static(i) => ("a static", i.static_token.to_token_stream()),
        syn::Item::Impl(i) => ("an `impl` block", i.impl_token.to_token_stream()),
        syn::Item::Trait(i) => ("a trait", i.trait_token.to_token_stream()),
        syn::Item::Mod(i) => ("a module", i.mod_token.to_token_stream()),
        syn::Item::Type(i) => ("a type alias", i.type_token.to_token_stream()),
        syn::Item::Use(i) => ("a `use` item", i.use_token.to_token_stream()),
        other => ("this item", other.to_token_stream()),
    };
    let struct_hint = if attribute == "tool" && matches!(item, syn::Item::Struct(_)) {
        "; a struct of arguments is taken by the tool's function, marked `#[tool(args)]`"
    } else {
        ""
    };
    let error = syn::Error::new_spanned(
        at,
        format!("`#[{attribute}]` applies to {applies_to}, not to {what}{struct_hint}"),
    )
    .into_compile_error();
    Err(quote::quote!(#item #error))
}

/// Collects errors while parsing. It must be [`Ctxt::check`]ed before it is dropped, so no
/// error is ever lost.
pub(crate) struct Ctxt {
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub(crate) fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// Records an error spanning the tokens of `obj`.
    pub(crate) fn error_spanned_by<T: ToTokens, M: Display>(&self, obj: T, message: M) {
        self.syn_error(syn::Error::new_spanned(obj.into_token_stream(), message));
    }

    /// Records an error at a span.
    pub(crate) fn error_at<M: Display>(&self, span: proc_macro2::Span, message: M) {
        self.syn_error(syn::Error::new(span, message));
    }

    /// Records a syn error.
    pub(crate) fn syn_error(&self, error: syn::Error) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("Ctxt used after check")
            .push(error);
    }

    /// Consumes the context: all errors combined, if there were any.
    pub(crate) fn check(self) -> Result<(), syn::Error> {
        let errors = self.errors.borrow_mut().take().expect("Ctxt checked twice");
        let mut errors = errors.into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for e in errors {
            combined.combine(e);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            panic!("forgot to check for errors");
        }
    }
}

/// An attribute value that may be given once; a second occurrence is reported as a duplicate.
pub(crate) struct Attr<'c, T> {
    cx: &'c Ctxt,
    name: &'static str,
    value: Option<T>,
}

impl<'c, T> Attr<'c, T> {
    pub(crate) fn none(cx: &'c Ctxt, name: &'static str) -> Self {
        Attr {
            cx,
            name,
            value: None,
        }
    }

    pub(crate) fn set<A: ToTokens>(&mut self, obj: A, value: T) {
        if self.value.is_some() {
            self.cx
                .error_spanned_by(obj, format!("duplicate attribute `{}`", self.name));
        } else {
            self.value = Some(value);
        }
    }

    pub(crate) fn get(self) -> Option<T> {
        self.value
    }
}

/// "did you mean `x`?" for a misspelt key, when one known key is close, or when one is a
/// longer or shorter form of the other (`mime_type` for `mime`, `desc` for `description`).
pub(crate) fn suggestion(unknown: &str, known: &[&str]) -> String {
    let close = known
        .iter()
        .map(|k| (edit_distance(unknown, k), *k))
        .min_by_key(|(d, _)| *d)
        .filter(|(d, k)| *d <= (k.len() / 3).max(2))
        .map(|(_, k)| k);
    let best = close.or_else(|| {
        known.iter().copied().find(|k| {
            let (short, long) = if k.len() < unknown.len() {
                (*k, unknown)
            } else {
                (unknown, *k)
            };
            short.len() >= 4 && long.starts_with(short)
        })
    });
    match best {
        Some(k) => format!("; did you mean `{k}`?"),
        None if known.len() == 1 => format!("; expected `{}`", known[0]),
        None => format!(
            "; expected one of {}",
            known
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(cur).min(row[j])
            };
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_keys_are_suggested() {
        assert_eq!(
            suggestion("nmae", &["name", "title"]),
            "; did you mean `name`?"
        );
        assert_eq!(
            suggestion("zzzzzz", &["name", "title"]),
            "; expected one of `name`, `title`"
        );
        assert_eq!(
            suggestion("mime_type", &["mime", "meta"]),
            "; did you mean `mime`?"
        );
        assert_eq!(
            suggestion("desc", &["description", "title"]),
            "; did you mean `description`?"
        );
    }
}
