//! `#[mcp_runtime::main]` and `#[mcp_runtime::test]`: Tokio's attributes through the
//! runtime's own Tokio, so a server needs no direct dependency on Tokio; and `main` without
//! options, run on the runtime `mcp-runtime`'s features choose.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::paths;

/// `#[tokio::main(…)]` or `#[tokio::test(…)]` (`entry`) with these options, through the
/// runtime's Tokio.
pub(crate) fn tokio_entry(entry: &str, args: TokenStream, item: TokenStream) -> TokenStream {
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
/// runtime `mcp-runtime` chooses (`__private::block_on`, from its features and the command
/// line), so the choice of scheduler is made in the runtime, not in generated code.
pub(crate) fn main(mut func: syn::ItemFn) -> TokenStream {
    let block_on = paths::block_on();
    let body = &func.block;
    // The body stays an async block of the user's own tokens, so inference and errors stay
    // on them.
    let run = quote_spanned!(body.span()=> #block_on(async move #body));
    func.sig.asyncness = None;
    func.block = syn::parse_quote!({ #run });
    quote!(#func)
}
