//! `#[prompt]`: the descriptor of the hidden struct (implementing `Prompt`), with the shim that
//! parses the text arguments and renders the result.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::{
    CommonFields, Skeleton, TextItem, completions, doc_text, option, state_needs, text_item_shim,
};
use crate::parse::Kind;
use crate::parse::docs::Docs;
use crate::parse::prompt::PromptModel;
use crate::parse::signature::{ParamKind, unraw};
use crate::paths;

pub(super) fn expand(m: &PromptModel) -> TokenStream {
    let argument_descriptor = paths::prompt_argument_descriptor();
    let CommonFields {
        name,
        title,
        description,
        icons,
        meta,
        scopes,
    } = CommonFields::of(&m.common);
    let states = state_needs(m.params.iter().map(|p| &p.param), None);
    let mut shims = TokenStream::new();
    let completions = completions(&m.completions, &mut shims);
    let no_title = option(None::<TokenStream>);
    let arguments = m
        .params
        .iter()
        .filter(|p| p.param.kind == ParamKind::Argument)
        .map(|p| {
            let arg_name = unraw(&p.param.ident);
            let docs = doc_text(&Docs::from_attrs(&p.param.docs));
            let required = p.required;
            quote!(#argument_descriptor {
                name: #arg_name,
                title: #no_title,
                description: #docs,
                required: #required,
            })
        });
    shims.extend(text_item_shim(TextItem {
        func: &m.func,
        params: &m.params,
        return_type: m.return_type.as_ref(),
        shim: format_ident!("__mcp_get"),
        request: (format_ident!("__mcp_args"), paths::prompt_arguments()),
        future: paths::prompt_future(),
        source: quote!(&__mcp_args),
        output_ty: paths::prompt_output_ty(),
        output: paths::prompt_output(),
        output_args: TokenStream::new(),
        convert: quote!(__MCP_OUTPUT(__mcp_out)),
    }));
    Skeleton {
        kind: Kind::Prompt,
        func: &m.func,
        beside: TokenStream::new(),
        shims,
        fields: quote! {
            name: #name,
            title: #title,
            description: #description,
            arguments: &[#(#arguments),*],
            icons: #icons,
            meta: #meta,
            completions: #completions,
            get: __mcp_get,
            states: #states,
            scopes: #scopes,
        },
        submit: true,
        emit_function: true,
    }
    .into_tokens()
}
