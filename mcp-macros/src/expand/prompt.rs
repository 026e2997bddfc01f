//! `#[prompt]`: the function, the hidden unit struct named like it (implementing `Prompt`),
//! the shim that parses the text arguments and renders the result, and its submission.

use crate::parse::signature::{ParamKind, unraw};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use crate::parse::extras::{completions_tokens, icons_tokens, meta_tokens};
use crate::parse::prompt::{PromptModel, parse};
use crate::paths;

pub(crate) fn expand(args: TokenStream, func: syn::ItemFn) -> TokenStream {
    match parse(args, func) {
        Ok(model) => {
            let tokens = expand_model(&model);
            super::debug_print("prompt", &model.name, &tokens);
            tokens
        }
        Err(failed) => super::fallback(*failed),
    }
}

fn expand_model(m: &PromptModel) -> TokenStream {
    let private = paths::private();
    let prompt_trait = paths::prompt_trait();
    let descriptor = paths::prompt_descriptor();
    let argument_descriptor = paths::prompt_argument_descriptor();
    let source_location = paths::source_location();
    let prompt_arguments = paths::prompt_arguments();
    let prompt_future = paths::prompt_future();
    let context = paths::context();
    let prompt_output = paths::prompt_output();
    let prompt_output_ty = paths::prompt_output_ty();

    let func = &m.func;
    let vis = &func.vis;
    let fn_ident = &func.sig.ident;
    let name = &m.name;
    let title = option_lit(m.title.as_ref());
    let description = m.description.to_option_tokens();
    let icons = icons_tokens(&m.icons);
    let meta = meta_tokens(m.meta.as_ref());
    let mut shims = TokenStream::new();
    let completions = completions_tokens(&m.completions, &mut shims);

    let arguments = m
        .params
        .iter()
        .filter(|p| p.param.kind == ParamKind::Argument)
        .map(|p| {
            let arg_name = unraw(&p.param.ident);
            let docs = crate::parse::docs::Docs::from_attrs(&p.param.docs).to_option_tokens();
            let required = p.required;
            quote!(#argument_descriptor {
                name: #arg_name,
                title: ::core::option::Option::None,
                description: #docs,
                required: #required,
            })
        });
    let (reads, call_args) = super::text_param_reads(&m.params, &quote!(&__mcp_args));
    let awaited = func.sig.asyncness.map(|_| quote!(.await));
    // Like a tool's, the return type is checked once, as a type argument, so an unfit type is
    // reported on its own tokens. (A missing return type is a parse error.)
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

            const __MCP_OUTPUT: #prompt_output_ty<#output_ty> = #prompt_output::<#output_ty>();

            fn __mcp_get(__mcp_ctx: #context, __mcp_args: #prompt_arguments) -> #prompt_future {
                ::std::boxed::Box::pin(async move {
                    let _ = &__mcp_ctx;
                    #(#reads)*
                    let __mcp_out = #fn_ident(#(#call_args),*) #awaited;
                    __MCP_OUTPUT(__mcp_out)
                })
            }

            impl #prompt_trait for #fn_ident {
                const DESCRIPTOR: &'static #descriptor = &#descriptor {
                    name: #name,
                    title: #title,
                    description: #description,
                    arguments: &[#(#arguments),*],
                    icons: #icons,
                    meta: #meta,
                    completions: #completions,
                    get: __mcp_get,
                    location: #source_location { file: ::core::file!(), line: #line },
                };
            }
        };

        #private::submit!(#private::PromptEntry(<#fn_ident as #prompt_trait>::DESCRIPTOR));
    }
}

pub(crate) fn option_lit(lit: Option<&syn::LitStr>) -> TokenStream {
    match lit {
        Some(l) => quote!(::core::option::Option::Some(#l)),
        None => quote!(::core::option::Option::None),
    }
}
