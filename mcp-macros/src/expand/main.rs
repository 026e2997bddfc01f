//! `#[mcp_runtime::main]` and `#[mcp_runtime::test]`: Tokio's attributes through the
//! runtime's own Tokio, so a server needs no direct dependency on Tokio.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::paths;

/// `entry` is `main` or `test`.
pub(crate) fn expand(entry: &str, args: TokenStream, item: TokenStream) -> TokenStream {
    if entry == "main" && args.is_empty() {
        return expand_main(item);
    }
    let tokio = paths::tokio();
    let krate = paths::as_string(&tokio);
    let entry = format_ident!("{entry}");
    let sep = if args.is_empty() { quote!() } else { quote!(,) };
    quote! {
        #[#tokio::#entry(crate = #krate #sep #args)]
        #item
    }
}

/// `async fn main() -> R { body }` becomes a `fn main() -> R` that runs the body on the
/// runtime the facade's features choose (`__private::block_on`), so the choice of scheduler
/// is made by `mcp-runtime`'s features, not in generated code.
fn expand_main(item: TokenStream) -> TokenStream {
    let mut func = match syn::parse2::<syn::ItemFn>(item.clone()) {
        Ok(func) => func,
        Err(e) => {
            let error = e.into_compile_error();
            return quote!(#error #item);
        }
    };
    if func.sig.asyncness.is_none() {
        let error = syn::Error::new(
            func.sig.fn_token.span(),
            "`#[mcp_runtime::main]` goes on an `async fn main`: add `async`",
        )
        .into_compile_error();
        return quote!(#error #func);
    }
    if !func.sig.inputs.is_empty() {
        let error = syn::Error::new_spanned(
            &func.sig.inputs,
            "`main` takes no parameters: read the command line with `std::env::args()`",
        )
        .into_compile_error();
        // A `main` of the right shape, so that the error above is the only one.
        return quote!(#error fn main() {});
    }
    let block_on = paths::block_on();
    let body = &func.block;
    // The body stays an async block of the user's own tokens, so inference and errors stay
    // on them.
    let run = quote_spanned!(body.span()=> #block_on(async move #body));
    func.sig.asyncness = None;
    func.block = syn::parse_quote!({ #run });
    quote!(#func)
}
