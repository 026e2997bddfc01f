//! `#[mcp_runtime::main]` and `#[mcp_runtime::test]`: Tokio's attributes through the
//! runtime's own Tokio, so a server needs no direct dependency on Tokio.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::paths;

/// `entry` is `main` or `test`.
pub(crate) fn expand(entry: &str, args: TokenStream, item: TokenStream) -> TokenStream {
    let tokio = paths::tokio();
    let krate = paths::as_string(&tokio);
    let entry = format_ident!("{entry}");
    let sep = if args.is_empty() { quote!() } else { quote!(,) };
    quote! {
        #[#tokio::#entry(crate = #krate #sep #args)]
        #item
    }
}
