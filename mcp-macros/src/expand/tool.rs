//! `#[tool]`: the function, its hidden argument struct, the hidden unit struct named like the
//! function (implementing `Tool`), and its submission to the registry.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::parse::tool::{Description, ParamKind, ToolModel, parse};
use crate::paths;

pub(crate) fn expand(args: TokenStream, func: syn::ItemFn) -> TokenStream {
    match parse(args, func) {
        Ok(model) => {
            let tokens = expand_model(&model);
            super::debug_print("tool", &model.name, &tokens);
            tokens
        }
        // Emit the function as it would be without the macro, so the rest of the crate and
        // the IDE keep working, next to every error found.
        Err(failed) => {
            let (func, error) = *failed;
            let errors = error.into_compile_error();
            quote!(#func #errors)
        }
    }
}

fn expand_model(m: &ToolModel) -> TokenStream {
    let serde = paths::serde();
    let schemars = paths::schemars();
    let serde_crate = paths::as_string(&serde);
    let schemars_crate = paths::as_string(&schemars);
    let tool_trait = paths::tool_trait();
    let descriptor = paths::tool_descriptor();
    let annotations_ty = paths::tool_annotations();
    let source_location = paths::source_location();
    let arguments = paths::arguments();
    let tool_future = paths::tool_future();
    let context = paths::context();
    let into_tool_result = paths::into_tool_result();
    let output_schema = paths::output_schema();
    let assert_param = paths::assert_tool_parameter();
    let submit = paths::submit_tool();
    let input_schema = paths::input_schema();
    let fields_schema = paths::fields_schema();

    let func = &m.func;
    let vis = &func.vis;
    let fn_ident = &func.sig.ident;
    let args_ident = format_ident!(
        "__mcp_args_{}",
        fn_ident.to_string().trim_start_matches("r#")
    );
    let name = &m.name;
    let title = match &m.title {
        Some(t) => quote!(::core::option::Option::Some(#t)),
        None => quote!(::core::option::Option::None),
    };
    let description = match &m.description {
        Description::Override(lit) => quote!(::core::option::Option::Some(#lit)),
        Description::Docs(docs) => docs.to_option_tokens(),
    };
    let hint = |v: Option<bool>| match v {
        Some(b) => quote!(::core::option::Option::Some(#b)),
        None => quote!(::core::option::Option::None),
    };
    let (read_only, destructive, idempotent, open_world) = (
        hint(m.annotations.read_only),
        hint(m.annotations.destructive),
        hint(m.annotations.idempotent),
        hint(m.annotations.open_world),
    );

    let arguments_params: Vec<_> = m
        .params
        .iter()
        .filter(|p| p.kind == ParamKind::Argument)
        .collect();

    // Each parameter type is checked at its own span, so a type that cannot be an argument is
    // reported on the user's token.
    let param_assertions = arguments_params.iter().map(|p| {
        let ty = &p.ty;
        quote_spanned!(ty.span()=> #assert_param::<#ty>();)
    });

    // The argument type, its schema, and the expression that reads it.
    let (args_struct, args_ty, input_schema_fn) = if m.args_struct {
        let ty = &arguments_params[0].ty;
        (quote!(), quote!(#ty), quote!(#input_schema::<#ty>))
    } else {
        let fields = arguments_params.iter().map(|p| {
            let (ident, ty, docs) = (&p.ident, &p.ty, &p.docs);
            quote!(#(#docs)* #ident: #ty,)
        });
        (
            quote! {
                #[derive(#serde::Deserialize, #schemars::JsonSchema)]
                #[serde(crate = #serde_crate, deny_unknown_fields)]
                #[schemars(crate = #schemars_crate)]
                #[allow(non_camel_case_types)]
                struct #args_ident { #(#fields)* }
            },
            quote!(#args_ident),
            quote!(#fields_schema::<#args_ident>),
        )
    };

    let call_args = m.params.iter().map(|p| match p.kind {
        ParamKind::Context => quote!(::core::clone::Clone::clone(&__mcp_ctx)),
        ParamKind::Argument if m.args_struct => quote!(__mcp_args),
        ParamKind::Argument => {
            let ident = &p.ident;
            quote!(__mcp_args.#ident)
        }
    });
    let awaited = if func.sig.asyncness.is_some() {
        quote!(.await)
    } else {
        quote!()
    };
    let (output_ty, convert) = match &m.return_type {
        Some(ty) => (
            quote!(#ty),
            quote_spanned!(ty.span()=> <_ as #into_tool_result>::into_tool_result(__mcp_out)),
        ),
        None => (
            quote!(()),
            quote!(<() as #into_tool_result>::into_tool_result(__mcp_out)),
        ),
    };
    let line = quote_spanned!(fn_ident.span()=> ::core::line!());

    quote! {
        #func

        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #vis struct #fn_ident {}

        const _: () = {
            #args_struct

            fn __mcp_call(__mcp_ctx: #context, __mcp_raw: #arguments) -> #tool_future {
                ::std::boxed::Box::pin(async move {
                    let _ = &__mcp_ctx;
                    let __mcp_args: #args_ty = match __mcp_raw.parse() {
                        ::core::result::Result::Ok(args) => args,
                        ::core::result::Result::Err(error) => return error,
                    };
                    let __mcp_out = #fn_ident(#(#call_args),*) #awaited;
                    #convert
                })
            }

            #[allow(dead_code)]
            fn __mcp_assertions() {
                #(#param_assertions)*
            }

            impl #tool_trait for #fn_ident {
                const DESCRIPTOR: &'static #descriptor = &#descriptor {
                    name: #name,
                    title: #title,
                    description: #description,
                    annotations: #annotations_ty {
                        read_only: #read_only,
                        destructive: #destructive,
                        idempotent: #idempotent,
                        open_world: #open_world,
                    },
                    input_schema: #input_schema_fn,
                    output_schema: #output_schema::<#output_ty>,
                    call: __mcp_call,
                    location: #source_location { file: ::core::file!(), line: #line },
                };
            }
        };

        #submit!(<#fn_ident as #tool_trait>::DESCRIPTOR);
    }
}
