//! `#[mcp_runtime::main]`: `#[tokio::main]` through the runtime's own Tokio.

use proc_macro2::TokenStream;
use quote::quote;

use crate::paths;

pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let tokio = paths::tokio();
    let krate = paths::as_string(&tokio);
    let sep = if args.is_empty() { quote!() } else { quote!(,) };
    quote! {
        #[#tokio::main(crate = #krate #sep #args)]
        #item
    }
}
