//! `#[toolbox]`: the `impl` block as rustc takes it, and beside it, in a block of its own,
//! each method's tool (the skeleton of a free function's, without the function, which stays a
//! method, and without the submission to the automatic registry, as only a value can serve
//! it) and the type's `Toolbox` implementation listing them.

use proc_macro2::TokenStream;
use quote::quote;

use crate::parse::toolbox::ToolboxModel;
use crate::paths;

pub(crate) fn expand(m: &ToolboxModel) -> TokenStream {
    let block = &m.block;
    let tools: Vec<TokenStream> = m.tools.iter().map(super::tool::expand).collect();
    let idents = m.tools.iter().map(|t| &t.func.sig.ident);
    let tool_trait = paths::tool_trait();
    let implementation = toolbox_impl(
        m.self_ty(),
        quote!(#(<#idents as #tool_trait>::DESCRIPTOR),*),
    );
    quote! {
        #block

        const _: () = {
            #(#tools)*
            #implementation
        };
    }
}

/// The block as written and its errors, with a `Toolbox` implementation listing no tools,
/// so that `.toolbox(value)` raises nothing more.
pub(crate) fn fallback(m: &ToolboxModel, errors: syn::Error) -> TokenStream {
    let block = &m.block;
    let errors = errors.into_compile_error();
    let implementation = toolbox_impl(m.self_ty(), TokenStream::new());
    quote! {
        #block
        const _: () = { #implementation };
        #errors
    }
}

fn toolbox_impl(self_ty: &syn::Type, descriptors: TokenStream) -> TokenStream {
    let (toolbox, descriptor) = (paths::toolbox_trait(), paths::tool_descriptor());
    quote! {
        impl #toolbox for #self_ty {
            fn __tools() -> ::std::vec::Vec<&'static #descriptor> {
                ::std::vec![#descriptors]
            }
        }
    }
}
