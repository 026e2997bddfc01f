//! What an attribute emits when its item has errors: every error, and the item as rustc would
//! see it without the attribute, so the rest of the crate and the IDE keep working.

use proc_macro2::TokenStream;
use quote::quote;

use crate::parse::{Item, NotAFunction};

/// The item as written and the error; the attribute made nothing of it.
pub(crate) fn not_a_function(not_a_function: NotAFunction) -> TokenStream {
    let NotAFunction { tokens, error } = not_a_function;
    let error = error.into_compile_error();
    quote!(#tokens #error)
}

/// The function, and every error found.
pub(crate) fn item(item: &Item, errors: syn::Error) -> TokenStream {
    let errors = errors.into_compile_error();
    let func = item.func();
    quote!(#func #errors)
}
