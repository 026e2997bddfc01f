//! `#[resource]`: the function, the hidden unit struct named like it (implementing
//! `ResourceItem`), the shim that binds the URI variables and converts the contents, and its
//! submission.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::prompt::option_lit;
use crate::parse::extras::{completions_tokens, icons_tokens, meta_tokens};
use crate::parse::resource::{ResourceModel, parse};
use crate::paths;

pub(crate) fn expand(args: TokenStream, func: syn::ItemFn) -> TokenStream {
    match parse(args, func) {
        Ok(model) => {
            let tokens = expand_model(&model);
            super::debug_print("resource", &model.name, &tokens);
            tokens
        }
        Err(failed) => super::fallback(*failed),
    }
}

fn expand_model(m: &ResourceModel) -> TokenStream {
    let private = paths::private();
    let resource_trait = paths::resource_trait();
    let descriptor = paths::resource_descriptor();
    let source_location = paths::source_location();
    let resource_request = paths::resource_request();
    let resource_future = paths::resource_future();
    let context = paths::context();
    let resource_output = paths::resource_output();
    let resource_output_ty = paths::resource_output_ty();
    let list_function = paths::list_function();
    let role = paths::role();

    let func = &m.func;
    let vis = &func.vis;
    let fn_ident = &func.sig.ident;
    let uri = &m.uri;
    let name = &m.name;
    let title = option_lit(m.title.as_ref());
    let description = m.description.to_option_tokens();
    let mime = option_lit(m.mime.as_ref());
    let size = match &m.size {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    };
    let audience = m.audience.iter().map(|r| {
        if r == "user" {
            quote!(#role::User)
        } else {
            quote!(#role::Assistant)
        }
    });
    let priority = match m.priority {
        Some(p) => quote!(::core::option::Option::Some(#p)),
        None => quote!(::core::option::Option::None),
    };
    let last_modified = option_lit(m.last_modified.as_ref());
    let cache = match m.cache {
        Some(crate::parse::resource::CacheHint { ttl_ms, public }) => {
            let hint = paths::cache_hint();
            quote!(::core::option::Option::Some(#hint { ttl_ms: #ttl_ms, public: #public }))
        }
        None => quote!(::core::option::Option::None),
    };
    let icons = icons_tokens(&m.icons);
    let meta = meta_tokens(m.meta.as_ref());
    let mut shims = TokenStream::new();
    let completions = completions_tokens(&m.completions, &mut shims);
    let list = match &m.list {
        Some(path) => {
            // On the function's path alone, as for completion functions.
            let call = super::respan(quote!(#list_function::list(&#path)), path.span());
            shims.extend(quote! {
                fn __mcp_list() -> ::core::result::Result<::std::vec::Vec<#private::Resource>, #private::RpcError> {
                    #call
                }
            });
            quote!(::core::option::Option::Some(__mcp_list))
        }
        None => quote!(::core::option::Option::None),
    };

    let (reads, call_args) = super::text_param_reads(&m.params, &quote!(&__mcp_request.variables));
    let awaited = func.sig.asyncness.map(|_| quote!(.await));
    // Checked once, as a type argument, on the return type's own tokens (see `prompt`).
    let output_ty = match &m.return_type {
        Some(ty) => quote!(#ty),
        None => quote!(()),
    };
    let line = quote_spanned!(fn_ident.span()=> ::core::line!());

    quote! {
        #func

        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #vis struct #fn_ident {}

        const _: () = {
            #shims

            const __MCP_OUTPUT: #resource_output_ty<#output_ty> = #resource_output::<#output_ty>(#mime);

            fn __mcp_read(__mcp_ctx: #context, __mcp_request: #resource_request) -> #resource_future {
                ::std::boxed::Box::pin(async move {
                    let _ = &__mcp_ctx;
                    #(#reads)*
                    let __mcp_out = #fn_ident(#(#call_args),*) #awaited;
                    (__MCP_OUTPUT.into_contents)(__mcp_out, &__mcp_request.uri, __MCP_OUTPUT.mime_type)
                })
            }

            impl #resource_trait for #fn_ident {
                const DESCRIPTOR: &'static #descriptor = &#descriptor {
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
                    location: #source_location { file: ::core::file!(), line: #line },
                };
            }
        };

        #private::submit!(#private::ResourceEntry(<#fn_ident as #resource_trait>::DESCRIPTOR));
    }
}
