//! What an attribute emits when its item has errors: every error, and the code as close to a
//! good expansion as can be without them (tokio-macros' re-emit), so that the errors are the
//! only ones. The function is emitted as rustc would see it without the attribute, and next to
//! it the hidden struct, implementing the item's trait with a blank descriptor that nothing
//! reads: `tools![f]`, `<f as Tool>::DESCRIPTOR` and the IDE's view of `f` resolve as they would
//! after the fix. For `#[mcp_runtime::main]`, a `main` rustc takes.

use proc_macro2::TokenStream;
use quote::quote;

use super::{Skeleton, option};
use crate::parse::signature::unraw;
use crate::parse::{Item, Kind, NotAFunction};
use crate::paths;

/// The item as written and the error; the attribute made nothing of it.
pub(crate) fn not_a_function(not_a_function: NotAFunction) -> TokenStream {
    let NotAFunction { tokens, error } = not_a_function;
    let error = error.into_compile_error();
    quote!(#tokens #error)
}

/// The function, its hidden struct with a blank descriptor, and every error found.
pub(crate) fn item(item: &Item, errors: syn::Error) -> TokenStream {
    let errors = errors.into_compile_error();
    let func = item.func();
    // A method (its `self` is one of the errors) is in an `impl` block, where no struct can be.
    if func.sig.receiver().is_some() {
        return quote!(#func #errors);
    }
    let kind = item.kind();
    let mut tokens = Skeleton {
        kind,
        func,
        beside: TokenStream::new(),
        shims: TokenStream::new(),
        fields: blank_fields(kind, &unraw(&func.sig.ident)),
        submit: false,
        emit_function: true,
    }
    .into_tokens();
    tokens.extend(errors);
    tokens
}

/// `#[mcp_runtime::main]` on what is no function: the error, and the tokens as written.
pub(crate) fn main_unreadable(tokens: TokenStream, error: syn::Error) -> TokenStream {
    let error = error.into_compile_error();
    quote!(#error #tokens)
}

/// `#[mcp_runtime::main]` on a function it cannot run: the errors, and the function as
/// written, or a `main` of the right shape when rustc would refuse its parameters again.
pub(crate) fn main(func: &syn::ItemFn, errors: syn::Error) -> TokenStream {
    let errors = errors.into_compile_error();
    if func.sig.inputs.is_empty() {
        quote!(#errors #func)
    } else {
        quote!(#errors fn main() {})
    }
}

/// A descriptor of the kind with nothing in it but a name; its functions are never called, as
/// the program does not compile.
fn blank_fields(kind: Kind, name: &str) -> TokenStream {
    let none = option(None::<TokenStream>);
    let never = quote!(::core::unreachable!("an item with errors"));
    match kind {
        Kind::Tool => {
            let (annotations, task) = (paths::tool_annotations(), paths::task_support());
            quote! {
                name: #name,
                title: #none,
                description: #none,
                annotations: #annotations {
                    read_only: #none,
                    destructive: #none,
                    idempotent: #none,
                    open_world: #none,
                },
                icons: &[],
                meta: #none,
                input_schema: || #never,
                output_schema: || #none,
                schema_profile: #none,
                task: #task::Never,
                timeout: #none,
                call: |_, _| #never,
                states: &[],
                scopes: &[],
            }
        }
        Kind::Prompt => quote! {
            name: #name,
            title: #none,
            description: #none,
            arguments: &[],
            icons: &[],
            meta: #none,
            completions: &[],
            get: |_, _| #never,
            states: &[],
                scopes: &[],
        },
        Kind::Resource => quote! {
            uri: "",
            name: #name,
            title: #none,
            description: #none,
            mime_type: #none,
            size: #none,
            audience: &[],
            priority: #none,
            last_modified: #none,
            cache: #none,
            icons: &[],
            meta: #none,
            completions: &[],
            read: |_, _| #never,
            list: #none,
            states: &[],
                scopes: &[],
        },
    }
}
