//! `#[tool]`: the table that describes the arguments (built in a `const fn` generic over
//! the parameter types, so that each is checked once, on its own token; the runtime reads
//! the arguments into a tree of their values and describes them from the table), the
//! descriptor of the hidden struct (implementing `Tool`) with the shim that reads the
//! arguments and calls the function, and the warning about a missing description.

use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::{CommonFields, Skeleton, doc_concat, option, respan, state_needs};
use crate::parse::Kind;
use crate::parse::docs::Docs;
use crate::parse::signature::{ParamKind, unraw};
use crate::parse::tool::ToolModel;
use crate::paths;

pub(crate) fn expand(m: &ToolModel) -> TokenStream {
    let annotations_ty = paths::tool_annotations();
    let arguments = paths::arguments();
    let tool_future = paths::tool_future();
    let context = paths::context();
    let tool_arguments = paths::tool_arguments();
    let argument_struct = paths::argument_struct();
    let parameter_deserialize = paths::parameter_deserialize();
    let parameter_schema = paths::parameter_schema();
    let tool_output = paths::tool_output();
    let tool_output_of = paths::tool_output_of();
    let task = {
        let support = paths::task_support();
        let variant = m
            .task
            .clone()
            .unwrap_or_else(|| syn::Ident::new("Never", proc_macro2::Span::call_site()));
        quote!(#support::#variant)
    };
    let timeout = option(
        m.timeout_ms
            .map(|ms| quote!(::core::time::Duration::from_millis(#ms))),
    );
    let schema_profile = option(m.schema_profile.as_ref().map(|variant| {
        let profile = paths::schema_profile();
        quote!(#profile::#variant)
    }));

    let func = &m.func;
    let fn_ident = &func.sig.ident;
    let states = state_needs(&m.params, m.owner.as_ref());
    let CommonFields {
        name,
        title,
        description,
        icons,
        meta,
        scopes,
    } = CommonFields::of(&m.common);
    let hint = option::<bool>;
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
    let param_types: Vec<_> = arguments_params.iter().map(|p| &p.ty).collect();

    // The parameter types are checked exactly once: as the type arguments of one `const fn`
    // whose bounds name what a parameter needs. rustc reports an unmet bound on the type
    // argument itself, which is the user's own token, and the table that describes them is
    // built inside that function, so it adds no errors of its own.
    // With `input_schema = …` the parameters are only deserialised, never described.
    let explicit_schema = m.input_schema.is_some();
    let args_struct = m.args.is_some();
    let (args_struct_items, args_ty, arguments_const) = if args_struct {
        let ty = param_types[0];
        let constructor = if explicit_schema {
            paths::argument_struct_parsed_only()
        } else {
            argument_struct
        };
        // A type known never to be an object (`Vec<String>`, `String`, a number) is refused
        // here, on its own token, rather than by the catalogue when the server starts.
        let (argument_object, arguments_check) =
            (paths::argument_object(), paths::arguments_check());
        let (maybe_an_object, not_an_object) =
            (paths::is_maybe_an_object(), paths::is_not_an_object());
        let check = quote! {
            #argument_object::<#ty, _>(
                (&#arguments_check::<#ty>::new()).object_kind(),
            )
        };
        let object_check = quote! {
            #[allow(dead_code)]
            fn __mcp_arguments_are_an_object() {
                #[allow(unused_imports)]
                use #maybe_an_object as _;
                #[allow(unused_imports)]
                use #not_an_object as _;
                #check;
            }
        };
        (object_check, quote!(#ty), quote!(#constructor::<#ty>()))
    } else {
        let type_params: Vec<_> = (0..param_types.len())
            .map(|i| format_ident!("__McpParam{i}"))
            .collect();
        // Each parameter is one row of a table the runtime describes them from, as a derived
        // `JsonSchema` of a struct of them would: no code of its own for each tool.
        let field = paths::field();
        let fields = arguments_params.iter().zip(&type_params).map(|(p, t)| {
            let name = unraw(&p.ident);
            let doc = doc_concat(&Docs::from_attrs(&p.docs)).unwrap_or_else(|| quote!(""));
            let header = option(p.header.as_ref().map(|h| {
                let name = &h.name;
                quote!(#name)
            }));
            match &p.default {
                // Read as an `Option` (so `null` is the default too) and described as the
                // parameter's own type, with its `default`.
                Some(value) => {
                    let json = paths::json_macro();
                    let value_ty = paths::json_value();
                    let value = json_literal(value);
                    quote! {
                        #field::defaulted::<#t>(#name, #doc, #header, {
                            fn __mcp_default() -> #value_ty {
                                #json!(#value)
                            }
                            __mcp_default
                        })
                    }
                }
                None => quote!(#field::of::<#t>(#name, #doc, #header)),
            }
        });
        // The values are read as a tree, `((P0,), ((P1,), (P2,)))`, by a reader of the
        // runtime's shared by every tool with the same parameter types; the struct only
        // describes them.
        let value_types = |types: Vec<TokenStream>| {
            let types: Vec<TokenStream> = arguments_params
                .iter()
                .zip(types)
                .map(|(p, ty)| match &p.default {
                    Some(_) => quote!(::core::option::Option<#ty>),
                    None => ty,
                })
                .collect();
            value_tree(&types)
        };
        let generic_values = value_types(type_params.iter().map(|t| quote!(#t)).collect());
        let values = value_types(param_types.iter().map(|t| quote!(#t)).collect());
        let names = arguments_params.iter().map(|p| unraw(&p.ident));
        let names = quote!(&[#(#names),*]);
        let bounds = if explicit_schema {
            quote!(#parameter_deserialize)
        } else {
            quote!(#parameter_deserialize + #parameter_schema)
        };
        let (bounded, turbofish) = if param_types.is_empty() {
            Default::default()
        } else {
            (
                quote!(<#(#type_params: #bounds),*>),
                quote!(::<#(#param_types),*>),
            )
        };
        let described = if explicit_schema {
            quote! {
                const fn __mcp_arguments #bounded () -> #tool_arguments<#generic_values> {
                    #tool_arguments::fields_parsed_only(#names)
                }
            }
        } else {
            quote! {
                const fn __mcp_arguments #bounded () -> #tool_arguments<#generic_values> {
                    #tool_arguments::fields(#names, const { &[#(#fields),*] })
                }
            }
        };
        (described, values, quote!(__mcp_arguments #turbofish ()))
    };

    // The state a call takes is found before it begins; a server without it was refused
    // when it was built, so a miss is no more than a tool error.
    let (state_of, state_missing) = (paths::state_of(), paths::state_missing());
    let state_reads = m.params.iter().enumerate().filter_map(|(i, p)| {
        let local = match p.kind {
            ParamKind::State => format_ident!("__mcp_state{i}"),
            ParamKind::Receiver => format_ident!("__mcp_this"),
            _ => return None,
        };
        Some(quote! {
            let #local = match #state_of(&__mcp_ctx) {
                ::core::result::Result::Ok(state) => state,
                ::core::result::Result::Err(error) => {
                    return ::std::boxed::Box::pin(::core::future::ready(#state_missing(error)));
                }
            };
        })
    });
    let state_reads = quote!(#(#state_reads)*);
    let call_args = m.params.iter().enumerate().map(|(i, p)| match p.kind {
        ParamKind::Context => quote!(::core::clone::Clone::clone(&__mcp_ctx)),
        ParamKind::State => {
            let local = format_ident!("__mcp_state{i}");
            quote!(#local)
        }
        ParamKind::Receiver => quote!(&*__mcp_this),
        ParamKind::Argument if args_struct => quote!(__mcp_args),
        ParamKind::Argument => {
            let ident = argument_local(p);
            match &p.default {
                Some(value) => {
                    // A string literal is converted (`"metric"` for a `String`); other
                    // literals are of the parameter's type as written.
                    let value = match value {
                        syn::Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Str(_),
                            ..
                        }) => quote_spanned!(value.span()=> ::core::convert::Into::into(#value)),
                        _ => quote!(#value),
                    };
                    // Bound with its type written, so that a literal is typed from it and
                    // not by a fallback (`clippy::default_numeric_fallback`).
                    let ty = &p.ty;
                    quote!(#ident.unwrap_or_else(|| {
                        let __mcp_default: #ty = #value;
                        __mcp_default
                    }))
                }
                None => quote!(#ident),
            }
        }
    });
    // A method of a `#[toolbox]` block is called through its type.
    let callee = match &m.owner {
        Some(owner) => quote!(<#owner>::#fn_ident),
        None => quote!(#fn_ident),
    };
    let is_method = m.params.iter().any(|p| p.kind == ParamKind::Receiver);
    // An async function's future is checked for `Send` by the type of its answer, so one
    // that is not is a single error on the function's name (see `SendCheck`). A method's
    // future borrows the value its call owns, so it is made inside the call's own future.
    let call = if func.sig.asyncness.is_some() {
        let (send_tool_future, send_check) = (paths::send_tool_future(), paths::send_check());
        let (not_send, send) = (paths::is_not_send_future(), paths::is_send_future());
        let check = respan(
            quote! {
                #send_tool_future::<#fn_ident, _>(
                    (&#send_check::<#fn_ident, _>(&__mcp_future)).future_kind(),
                    __mcp_future,
                )
            },
            fn_ident.span(),
        );
        let checked = quote! {
            #[allow(unused_imports)]
            use #not_send as _;
            #[allow(unused_imports)]
            use #send as _;
            let __mcp_future = #callee(#(#call_args),*);
            let __mcp_future = #check;
        };
        if is_method {
            quote! {
                ::std::boxed::Box::pin(async move {
                    let _ = &__mcp_ctx;
                    #checked
                    let __mcp_out = __mcp_future.await;
                    (__MCP_OUTPUT.into_tool_result)(__mcp_out)
                })
            }
        } else {
            quote! {
                #checked
                ::std::boxed::Box::pin(async move {
                    let _ = &__mcp_ctx;
                    let __mcp_out = __mcp_future.await;
                    (__MCP_OUTPUT.into_tool_result)(__mcp_out)
                })
            }
        }
    } else {
        quote! {
            ::std::boxed::Box::pin(async move {
                let _ = &__mcp_ctx;
                let __mcp_out = #callee(#(#call_args),*);
                (__MCP_OUTPUT.into_tool_result)(__mcp_out)
            })
        }
    };
    // A tool without a description is served with its name alone: a warning at the
    // function's name (proc macros have no warnings of their own on stable Rust, so it is a
    // deprecated constant, used there).
    let undocumented = if m.common.description.is_missing() {
        let note = format!(
            "the tool `{}` has no description, so a model sees only its name: add a doc comment above `fn {}` (`/// What it does.`) or `#[tool(description = \"…\")]`",
            m.common.name,
            unraw(fn_ident)
        );
        let use_site = quote_spanned!(fn_ident.span()=> #fn_ident::HAS_NO_DESCRIPTION);
        quote! {
            impl #fn_ident {
                #[deprecated(note = #note)]
                #[doc(hidden)]
                const HAS_NO_DESCRIPTION: () = ();
            }
            const _: () = #use_site;
        }
    } else {
        quote!()
    };
    // Like the parameters, the return type is checked once, on its own token.
    let output_ty = match &m.return_type {
        Some(ty) => quote!(#ty),
        None => quote!(()),
    };
    // A schema given explicitly is sent as written; the arguments are still read into the
    // parameters.
    let input_schema_fn = match &m.input_schema {
        Some(path) => {
            let value = paths::json_value();
            quote_spanned!(path.span()=> { let f: fn() -> #value = #path; f })
        }
        None => quote!(|| __MCP_ARGUMENTS.schema()),
    };

    // The tree of values read, taken apart into one local per parameter.
    let unpack = (!args_struct).then(|| {
        let locals: Vec<TokenStream> = arguments_params
            .iter()
            .map(|p| argument_local(p).into_token_stream())
            .collect();
        let pattern = value_tree(&locals);
        quote!(let #pattern = __mcp_args;)
    });
    let mut shims = quote! {
        #args_struct_items

        const __MCP_ARGUMENTS: #tool_arguments<#args_ty> = #arguments_const;
        const __MCP_OUTPUT: #tool_output<#output_ty> = #tool_output_of::<#output_ty>();
    };
    shims.extend(quote! {
        // The arguments are read before the call begins, from the message itself, so the call
        // owns what it needs and nothing of the message is copied.
        fn __mcp_call(__mcp_ctx: #context, __mcp_raw: #arguments<'_>) -> #tool_future {
            let __mcp_args = match __MCP_ARGUMENTS.parse(&__mcp_raw) {
                ::core::result::Result::Ok(args) => args,
                ::core::result::Result::Err(error) => {
                    return ::std::boxed::Box::pin(::core::future::ready(error));
                }
            };
            #unpack
            #state_reads
            #call
        }
    });
    Skeleton {
        kind: Kind::Tool,
        func,
        beside: undocumented,
        shims,
        fields: quote! {
            name: #name,
            title: #title,
            description: #description,
            annotations: #annotations_ty {
                read_only: #read_only,
                destructive: #destructive,
                idempotent: #idempotent,
                open_world: #open_world,
            },
            icons: #icons,
            meta: #meta,
            input_schema: #input_schema_fn,
            output_schema: __MCP_OUTPUT.output_schema,
            schema_profile: #schema_profile,
            task: #task,
            timeout: #timeout,
            call: __mcp_call,
            states: #states,
            scopes: #scopes,
        },
        submit: m.owner.is_none(),
        emit_function: m.owner.is_none(),
    }
    .into_tokens()
}

/// The local a parameter's value is read into before the call.
fn argument_local(p: &crate::parse::signature::Param) -> syn::Ident {
    format_ident!("__mcp_arg_{}", unraw(&p.ident))
}

/// The balanced tree the runtime reads a tool's parameters into (`ArgumentFields`): `()`,
/// `(a,)`, or the pair of the trees of the first and the second half, so that its depth (which
/// rustc's recursion limit bounds) grows with the logarithm of the number of parameters.
fn value_tree(items: &[TokenStream]) -> TokenStream {
    match items {
        [] => quote!(()),
        [one] => quote!((#one,)),
        _ => {
            let (left, right) = items.split_at(items.len() / 2);
            let (left, right) = (value_tree(left), value_tree(right));
            quote!((#left, #right))
        }
    }
}

/// A default as `json!` should see it: an integer without a suffix is given the widest one
/// that holds it (`json!` alone takes it for an `i32`, and refuses `5000000000`), and a float
/// without one `f64` (which it falls back to anyway, and `clippy::default_numeric_fallback`
/// would name in the user's crate); any other literal is left as written.
fn json_literal(value: &syn::Expr) -> TokenStream {
    let (negative, lit) = match value {
        syn::Expr::Lit(syn::ExprLit { lit, .. }) => (false, lit),
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => match &**expr {
            syn::Expr::Lit(syn::ExprLit { lit, .. }) => (true, lit),
            _ => return quote!(#value),
        },
        _ => return quote!(#value),
    };
    let typed: syn::Lit = match lit {
        syn::Lit::Int(lit) if lit.suffix().is_empty() => {
            let suffix = match lit.base10_parse::<u64>() {
                Ok(n) if n <= i64::MAX.unsigned_abs() || negative => "i64",
                Ok(_) => "u64",
                Err(_) => return quote!(#value),
            };
            syn::Lit::Int(syn::LitInt::new(
                &format!("{}{suffix}", lit.base10_digits()),
                lit.span(),
            ))
        }
        syn::Lit::Float(lit) if lit.suffix().is_empty() => {
            // `1.` takes a `0` first: `1.f64` would read as a field of `1`.
            let digits = lit.base10_digits();
            let zero = if digits.ends_with('.') { "0" } else { "" };
            syn::Lit::Float(syn::LitFloat::new(
                &format!("{digits}{zero}f64"),
                lit.span(),
            ))
        }
        _ => return quote!(#value),
    };
    if negative {
        quote!(-#typed)
    } else {
        quote!(#typed)
    }
}

#[cfg(test)]
mod tests {
    use super::json_literal;

    fn literal(written: &str) -> String {
        json_literal(&syn::parse_str(written).unwrap()).to_string()
    }

    #[test]
    fn a_default_without_a_suffix_is_given_the_one_json_would_fall_back_to_or_a_wider_one() {
        assert_eq!(literal("10"), "10i64");
        assert_eq!(literal("-3"), "- 3i64");
        assert_eq!(literal("5000000000"), "5000000000i64");
        assert_eq!(literal("18446744073709551615"), "18446744073709551615u64");
        assert_eq!(literal("-9223372036854775808"), "- 9223372036854775808i64");
        assert_eq!(literal("1.5"), "1.5f64");
        assert_eq!(literal("-1.5"), "- 1.5f64");
        assert_eq!(literal("1e3"), "1e3f64");
        assert_eq!(literal("1."), "1.0f64");
        assert_eq!(literal("-2."), "- 2.0f64");
    }

    #[test]
    fn a_default_with_a_suffix_or_of_another_kind_is_left_as_written() {
        assert_eq!(literal("10u8"), "10u8");
        assert_eq!(literal("1.5f32"), "1.5f32");
        assert_eq!(literal("true"), "true");
        assert_eq!(literal("\"metric\""), "\"metric\"");
        assert_eq!(literal("-x"), "- x");
    }
}
