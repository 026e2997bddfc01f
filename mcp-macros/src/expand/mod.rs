//! From a model without errors to tokens: the only code that writes code (with the path table
//! of `paths.rs`).
//!
//! Every item attribute emits the same [`Skeleton`] around its function: a hidden unit struct
//! named like the function, implementing the item's trait with a `&'static` descriptor, and the
//! descriptor's submission to the registry. `tool.rs`, `prompt.rs` and `resource.rs` give their
//! descriptor's fields and the shims they point at (prompts and resources share theirs,
//! [`text_item_shim`]); `fallback.rs` emits the skeleton with a blank descriptor when the item
//! has errors, and `main.rs` expands `#[mcp_runtime::main]` and `#[mcp_runtime::test]`.

pub(crate) mod fallback;
pub(crate) mod main;
mod prompt;
mod resource;
mod tool;
pub(crate) mod toolbox;

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::parse::common::{Common, CompleteEntry, Icon};
use crate::parse::docs::{Description, Docs};
use crate::parse::signature::{Param, ParamKind, TextParam, unraw};
use crate::parse::{Item, Kind};
use crate::paths;

/// The tokens of an item without errors.
pub(crate) fn item(item: &Item) -> TokenStream {
    let (tokens, name) = match item {
        Item::Tool(m) => (tool::expand(m), &m.common.name),
        Item::Prompt(m) => (prompt::expand(m), &m.common.name),
        Item::Resource(m) => (resource::expand(m), &m.common.name),
    };
    debug_print(item.kind().noun(), name, &tokens);
    tokens
}

/// What every item attribute emits: the function as written, the hidden unit struct named like
/// it, the struct's implementation of the item's trait with its descriptor, and the
/// descriptor's submission to the automatic registry.
pub(crate) struct Skeleton<'a> {
    pub kind: Kind,
    pub func: &'a syn::ItemFn,
    /// Emitted next to the struct (a tool's warning about a missing description).
    pub beside: TokenStream,
    /// Items the descriptor points at, private to it.
    pub shims: TokenStream,
    /// The descriptor's fields but its `location`, which the skeleton adds.
    pub fields: TokenStream,
    /// Whether the descriptor is submitted to the automatic registry.
    pub submit: bool,
    /// Whether the function is emitted (a `#[toolbox]` method stays in its `impl` block).
    pub emit_function: bool,
}

impl Skeleton<'_> {
    pub(crate) fn into_tokens(self) -> TokenStream {
        let (item_trait, descriptor) = match self.kind {
            Kind::Tool => (paths::tool_trait(), paths::tool_descriptor()),
            Kind::Prompt => (paths::prompt_trait(), paths::prompt_descriptor()),
            Kind::Resource => (paths::resource_trait(), paths::resource_descriptor()),
        };
        let Skeleton {
            kind,
            func,
            beside,
            shims,
            fields,
            submit,
            emit_function,
        } = self;
        let vis = &func.vis;
        let fn_ident = &func.sig.ident;
        let own = quote!(<#fn_ident as #item_trait>::DESCRIPTOR);
        let submission = submit.then(|| match kind {
            Kind::Tool => {
                let submit = paths::submit_tool();
                quote!(#submit!(#own);)
            }
            Kind::Prompt | Kind::Resource => {
                let submit = paths::submit();
                let entry = if kind == Kind::Prompt {
                    paths::prompt_entry()
                } else {
                    paths::resource_entry()
                };
                quote!(#submit!(#entry(#own));)
            }
        });
        let source_location = paths::source_location();
        let line = quote_spanned!(fn_ident.span()=> ::core::line!());
        let func = emit_function.then_some(func);
        quote! {
            #func

            #[doc(hidden)]
            #[allow(non_camel_case_types)]
            #vis struct #fn_ident {}

            #beside

            const _: () = {
                #shims

                impl #item_trait for #fn_ident {
                    const DESCRIPTOR: &'static #descriptor = &#descriptor {
                        #fields
                        location: #source_location { file: ::core::file!(), line: #line },
                    };
                }
            };

            #submission
        }
    }
}

/// The types of state an item's parameters take, as a `&'static [StateNeed]` expression:
/// its `State<T>` parameters, and the toolbox's own type for a method's `&self`.
fn state_needs<'a>(
    params: impl IntoIterator<Item = &'a Param>,
    owner: Option<&syn::Type>,
) -> TokenStream {
    let state = paths::state();
    let needs = params.into_iter().filter_map(|p| match p.kind {
        ParamKind::State => {
            let ty = &p.ty;
            let written = written(ty);
            Some(quote!(<#ty>::__need(#written)))
        }
        ParamKind::Receiver => {
            let owner = owner?;
            let written = format!("State<{}>", written(owner));
            Some(quote!(<#state<#owner>>::__need(#written)))
        }
        _ => None,
    });
    quote!(&[#(#needs),*])
}

/// A type as the user wrote it, for messages: `State<Db>`, not `State < Db >`.
fn written(ty: &syn::Type) -> String {
    let mut text = quote!(#ty).to_string();
    for (spaced, tight) in [
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ::", "::"),
        (":: ", "::"),
        (" ,", ","),
        ("& ", "&"),
    ] {
        text = text.replace(spaced, tight);
    }
    text
}

/// `Some(value)` or `None`, as an `Option` expression.
pub(crate) fn option<T: ToTokens>(value: Option<T>) -> TokenStream {
    match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    }
}

/// The fields every descriptor has, as expressions.
struct CommonFields {
    name: TokenStream,
    title: TokenStream,
    description: TokenStream,
    icons: TokenStream,
    meta: TokenStream,
    scopes: TokenStream,
}

impl CommonFields {
    fn of(common: &Common) -> CommonFields {
        let name = &common.name;
        CommonFields {
            name: quote!(#name),
            title: option(common.title.as_ref()),
            description: description(&common.description),
            icons: icons(&common.icons),
            meta: option(common.meta.as_ref()),
            scopes: {
                let scopes = &common.scopes;
                quote!(&[#(#scopes),*])
            },
        }
    }
}

/// A description as an `Option<&'static str>` expression.
fn description(description: &Description) -> TokenStream {
    match description {
        Description::Override(lit) => option(Some(lit)),
        Description::Docs(docs) => doc_text(docs),
    }
}

/// Doc comments as an `Option<&'static str>` expression: `Some(concat!(…))`, one piece per
/// line, or `None`.
fn doc_text(docs: &Docs) -> TokenStream {
    option(doc_concat(docs))
}

/// Doc comments as one `&'static str` expression, `concat!(…)` of a piece per line; `None`
/// when there are none.
fn doc_concat(docs: &Docs) -> Option<TokenStream> {
    if docs.is_empty() {
        return None;
    }
    let mut parts = Vec::with_capacity(docs.pieces().len() * 2);
    for (i, p) in docs.pieces().iter().enumerate() {
        if i > 0 {
            parts.push(quote!("\n"));
        }
        parts.push(quote!(#p));
    }
    Some(quote!(::core::concat!(#(#parts),*)))
}

/// The icons as a `&'static [Icon]` expression.
fn icons(icons: &[Icon]) -> TokenStream {
    let icon = paths::icon();
    let items = icons.iter().map(|i| {
        let src = &i.src;
        let mime = option(i.mime.as_ref());
        let sizes = &i.sizes;
        quote!(#icon { src: #src, mime_type: #mime, sizes: &[#(#sizes),*] })
    });
    quote!(&[#(#items),*])
}

/// The completions as a `&'static [CompletionDescriptor]` expression, with one shim function
/// per entry (emitted into `shims`).
fn completions(entries: &[CompleteEntry], shims: &mut TokenStream) -> TokenStream {
    let descriptor = paths::completion_descriptor();
    let completer = paths::completer();
    let context = paths::completion_context();
    let completion = paths::completion();
    let list = entries.iter().enumerate().map(|(i, e)| {
        let shim = format_ident!("__mcp_complete_{i}");
        let function = &e.function;
        let argument = unraw(&e.argument);
        // Every token of the call is on the function's path, so an unfit function is reported
        // there alone, not also on the whole attribute.
        let call = respan(
            quote!(#completer::complete(&#function, context)),
            function.span(),
        );
        shims.extend(quote! {
            fn #shim(context: &#context) -> #completion {
                #call
            }
        });
        quote!(#descriptor { argument: #argument, complete: #shim })
    });
    quote!(&[#(#list),*])
}

/// How a prompt's or resource's shim gets its text and gives back its result.
struct TextItem<'a> {
    func: &'a syn::ItemFn,
    params: &'a [TextParam],
    return_type: Option<&'a syn::Type>,
    /// The shim's name, and its second parameter with its type (the first is the `Context`).
    shim: syn::Ident,
    request: (syn::Ident, TokenStream),
    /// The future the shim returns.
    future: TokenStream,
    /// A `&PromptArguments` expression: where the arguments' text is.
    source: TokenStream,
    /// The converter of the return type: its type and the function that makes it, both generic
    /// over the return type, and that function's arguments.
    output_ty: TokenStream,
    output: TokenStream,
    output_args: TokenStream,
    /// The expression that turns `__mcp_out` into the shim's result.
    convert: TokenStream,
}

/// The shim of a prompt or resource: reads each text argument into its parameter, calls the
/// function, and converts what it returns, with the converter that checks the return type.
fn text_item_shim(t: TextItem<'_>) -> TokenStream {
    let context = paths::context();
    let fn_ident = &t.func.sig.ident;
    let (reads, call_args) = text_param_reads(t.params, &t.source);
    let awaited = t.func.sig.asyncness.map(|_| quote!(.await));
    // Like a tool's, the return type is checked once, as a type argument, so an unfit type is
    // reported on its own tokens. (A missing return type is a parse error.)
    let output_ty = match t.return_type {
        Some(ty) => quote!(#ty),
        None => quote!(()),
    };
    let TextItem {
        shim,
        request: (request, request_ty),
        future,
        output_ty: converter_ty,
        output,
        output_args,
        convert,
        ..
    } = t;
    quote! {
        const __MCP_OUTPUT: #converter_ty<#output_ty> = #output::<#output_ty>(#output_args);

        fn #shim(__mcp_ctx: #context, #request: #request_ty) -> #future {
            ::std::boxed::Box::pin(async move {
                let _ = &__mcp_ctx;
                #(#reads)*
                let __mcp_out = #fn_ident(#(#call_args),*) #awaited;
                #convert
            })
        }
    }
}

/// Reads each parameter of a prompt or resource into a local `__mcp_arg{i}`: a `Context` is
/// cloned, an argument parsed from the text in `source` (a `PromptArguments` expression).
/// Returns the statements and the call's arguments.
fn text_param_reads(
    params: &[TextParam],
    source: &TokenStream,
) -> (Vec<TokenStream>, Vec<proc_macro2::Ident>) {
    let text_argument = paths::text_argument();
    let reads = params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let local = format_ident!("__mcp_arg{i}");
            match p.param.kind {
                ParamKind::Context => quote!(let #local = ::core::clone::Clone::clone(&__mcp_ctx);),
                // Found when the server was built: a missing one is refused there.
                ParamKind::State | ParamKind::Receiver => {
                    let state_of = paths::state_of();
                    quote!(let #local = #state_of(&__mcp_ctx)?;)
                }
                ParamKind::Argument => {
                    let name = unraw(&p.param.ident);
                    let parsed = &p.parsed;
                    let read = if p.required { quote!(required) } else { quote!(optional) };
                    // Spanned on the parameter's type: a type that cannot be parsed from text
                    // is reported there.
                    let call = quote_spanned!(parsed.span()=> #text_argument::#read::<#parsed, _>(#source, #name));
                    quote!(let #local = #call?;)
                }
            }
        })
        .collect();
    let call_args = (0..params.len())
        .map(|i| format_ident!("__mcp_arg{i}"))
        .collect();
    (reads, call_args)
}

/// With `MCP_MACROS_DEBUG=1` in the environment of the build, prints each expansion to
/// standard error.
fn debug_print(kind: &str, name: &str, tokens: &TokenStream) {
    if std::env::var_os("MCP_MACROS_DEBUG").is_some_and(|v| v != "0") {
        let text = syn::parse2::<syn::File>(tokens.clone())
            .map(|file| quote!(#file).to_string())
            .unwrap_or_else(|_| tokens.to_string());
        eprintln!("// #[{kind}] {name}\n{text}\n");
    }
}

/// The tokens with every span set to `span`. `quote_spanned!` leaves interpolated paths (from
/// `paths`) at the call site, which makes rustc underline the whole attribute as well.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            if let TokenTree::Group(group) = &token {
                let mut inner =
                    proc_macro2::Group::new(group.delimiter(), respan(group.stream(), span));
                inner.set_span(span);
                token = TokenTree::Group(inner);
            } else {
                token.set_span(span);
            }
            token
        })
        .collect()
}
