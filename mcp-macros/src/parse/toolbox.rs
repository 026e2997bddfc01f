//! `#[toolbox]` on an `impl` block: the block, its type, and each `#[tool]` method read as a
//! tool whose `&self` is the toolbox's value. The methods' tool attributes and parameter
//! attributes are taken off, so the block is emitted as rustc takes it.

use quote::ToTokens;

use super::tool::{self, ToolModel};
use crate::ctxt::Ctxt;

/// A `#[toolbox]` block.
pub(crate) struct ToolboxModel {
    /// The block as it is emitted again (the tool attributes taken off).
    pub block: syn::ItemImpl,
    /// The block's tools, in the order written.
    pub tools: Vec<ToolModel>,
}

impl ToolboxModel {
    pub(crate) fn self_ty(&self) -> &syn::Type {
        &self.block.self_ty
    }
}

/// Reads the block; everything it cannot serve is recorded in `cx`.
pub(crate) fn parse(
    cx: &Ctxt,
    args: proc_macro2::TokenStream,
    tokens: proc_macro2::TokenStream,
) -> Result<ToolboxModel, syn::Error> {
    if !args.is_empty() {
        cx.error_spanned_by(
            &args,
            "`#[toolbox]` takes no arguments: give each tool's options on its own `#[tool(…)]`",
        );
    }
    let mut block = match syn::parse2::<syn::Item>(tokens) {
        Ok(syn::Item::Impl(block)) => block,
        Ok(other) => {
            return Err(syn::Error::new_spanned(
                other,
                "`#[toolbox]` applies to an `impl` block (`#[toolbox] impl MyServer { … }`) whose `#[tool]` methods take `&self`",
            ));
        }
        Err(error) => return Err(error),
    };
    if let Some((path, _)) = &block.trait_ {
        cx.error_spanned_by(
            path,
            "`#[toolbox]` goes on an inherent `impl` block (`impl MyServer`), not on a trait's implementation",
        );
    }
    if !block.generics.params.is_empty() {
        cx.error_spanned_by(
            &block.generics,
            "a toolbox cannot be generic: its tools' schemas are built for one concrete type; implement it for that type",
        );
    }
    let self_ty = (*block.self_ty).clone();
    let mut tools = Vec::new();
    for item in &mut block.items {
        let syn::ImplItem::Fn(method) = item else {
            continue;
        };
        // Reported here, and taken off, so the attribute does not report the `self` again.
        method.attrs.retain(|attr| {
            let other_item = is_attr(attr, "prompt") || is_attr(attr, "resource");
            if other_item {
                cx.error_spanned_by(
                    attr,
                    "a toolbox holds tools: make this a free function and take the toolbox's value as a `State<…>` parameter",
                );
            }
            !other_item
        });
        let Some(position) = method.attrs.iter().position(|a| is_attr(a, "tool")) else {
            continue;
        };
        let attr = method.attrs.remove(position);
        let args = match &attr.meta {
            syn::Meta::Path(_) => proc_macro2::TokenStream::new(),
            syn::Meta::List(list) => list.tokens.clone(),
            syn::Meta::NameValue(nv) => {
                cx.error_spanned_by(nv, "write `#[tool]` or `#[tool(key = value, …)]`");
                continue;
            }
        };
        let func = syn::ItemFn {
            attrs: method.attrs.clone(),
            vis: method.vis.clone(),
            modifiers: method.modifiers.clone(),
            sig: method.sig.clone(),
            block: Box::new(method.block.clone()),
        };
        let mut model = tool::parse(cx, args, func, Some(&self_ty));
        // The tool's shims are outside the `impl` block, where `Self` means nothing: its
        // argument and return types name the toolbox's type instead.
        for param in &mut model.params {
            param.ty = without_self(&param.ty, &self_ty);
        }
        if let Some(ty) = &model.return_type {
            model.return_type = Some(without_self(ty, &self_ty));
        }
        // The parameters' doc comments and attributes are the tool's; rustc takes the rest.
        method.sig = model.func.sig.clone();
        tools.push(model);
    }
    if tools.is_empty() {
        cx.error_spanned_by(
            block.impl_token.to_token_stream(),
            "this toolbox has no tools: mark its methods with `#[tool]`",
        );
    }
    Ok(ToolboxModel { block, tools })
}

/// `#[name]`, `#[name(…)]`, or a path ending in it (`#[mcp_runtime::tool]`).
fn is_attr(attr: &syn::Attribute, name: &str) -> bool {
    attr.path().segments.last().is_some_and(|s| s.ident == name)
}

/// `ty` with every `Self` replaced by the toolbox's type.
fn without_self(ty: &syn::Type, owner: &syn::Type) -> syn::Type {
    fn replace(
        tokens: proc_macro2::TokenStream,
        owner: &proc_macro2::TokenStream,
    ) -> proc_macro2::TokenStream {
        tokens
            .into_iter()
            .flat_map(|token| match token {
                proc_macro2::TokenTree::Ident(ident) if ident == "Self" => owner.clone(),
                proc_macro2::TokenTree::Group(group) => {
                    let mut inner =
                        proc_macro2::Group::new(group.delimiter(), replace(group.stream(), owner));
                    inner.set_span(group.span());
                    proc_macro2::TokenTree::Group(inner).into()
                }
                other => other.into(),
            })
            .collect()
    }
    let replaced = replace(ty.to_token_stream(), &owner.to_token_stream());
    syn::parse2(replaced).unwrap_or_else(|_| ty.clone())
}
