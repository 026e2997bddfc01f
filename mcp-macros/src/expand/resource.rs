//! `#[resource]`: the descriptor of the hidden struct (implementing `ResourceItem`), with the
//! shim that binds the URI variables and converts the contents, and the listing function's.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::spanned::Spanned;

use super::{
    CommonFields, Skeleton, TextItem, completions, option, respan, state_needs, text_item_shim,
};
use crate::parse::Kind;
use crate::parse::resource::{CacheHint, ResourceModel};
use crate::paths;

pub(super) fn expand(m: &ResourceModel) -> TokenStream {
    let role = paths::role();
    // A model without errors always has its URI.
    let uri = match &m.uri {
        Some(lit) => quote!(#lit),
        None => quote!(""),
    };
    let CommonFields {
        name,
        title,
        description,
        icons,
        meta,
        scopes,
    } = CommonFields::of(&m.common);
    let mime = option(m.mime.as_ref());
    let size = option(m.size.as_ref());
    let audience = m.audience.iter().map(|r| {
        if r == "user" {
            quote!(#role::User)
        } else {
            quote!(#role::Assistant)
        }
    });
    let priority = option(m.priority);
    let last_modified = option(m.last_modified.as_ref());
    let cache = option(m.cache.map(|CacheHint { ttl_ms, public }| {
        let hint = paths::cache_hint();
        quote!(#hint { ttl_ms: #ttl_ms, public: #public })
    }));
    let states = state_needs(m.params.iter().map(|p| &p.param), None);
    let mut shims = TokenStream::new();
    let completions = completions(&m.completions, &mut shims);
    let list = option(m.list.as_ref().map(|path| {
        let (list_function, resource, rpc_error) = (
            paths::list_function(),
            paths::resource(),
            paths::rpc_error(),
        );
        // On the function's path alone, as for completion functions.
        let call = respan(quote!(#list_function::list(&#path)), path.span());
        shims.extend(quote! {
            fn __mcp_list() -> ::core::result::Result<::std::vec::Vec<#resource>, #rpc_error> {
                #call
            }
        });
        quote!(__mcp_list)
    }));
    shims.extend(text_item_shim(TextItem {
        func: &m.func,
        params: &m.params,
        return_type: m.return_type.as_ref(),
        shim: format_ident!("__mcp_read"),
        request: (format_ident!("__mcp_request"), paths::resource_request()),
        future: paths::resource_future(),
        source: quote!(&__mcp_request.variables),
        output_ty: paths::resource_output_ty(),
        output: paths::resource_output(),
        output_args: mime,
        convert: quote! {
            (__MCP_OUTPUT.into_contents)(__mcp_out, &__mcp_request.uri, __MCP_OUTPUT.mime_type)
        },
    }));
    Skeleton {
        kind: Kind::Resource,
        func: &m.func,
        beside: TokenStream::new(),
        shims,
        fields: quote! {
            uri: #uri,
            name: #name,
            title: #title,
            description: #description,
            // The declared MIME type, or the one the return type always reads as.
            mime_type: __MCP_OUTPUT.mime_type,
            size: #size,
            audience: &[#(#audience),*],
            priority: #priority,
            last_modified: #last_modified,
            cache: #cache,
            icons: #icons,
            meta: #meta,
            completions: #completions,
            read: __mcp_read,
            list: #list,
            states: #states,
            scopes: #scopes,
        },
        submit: true,
        emit_function: true,
    }
    .into_tokens()
}
