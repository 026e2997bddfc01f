//! From tokens to a model of the item an attribute is on, keeping the span of everything
//! written. Nothing here emits code: each key, value, parameter and URI template is read on its
//! own, and every problem with it is recorded in the [`Ctxt`]; `validate` then checks the
//! pieces against each other.
//!
//! `common.rs` reads an attribute's keys (the shared ones with one parser for every kind of
//! item), with `attr.rs` for keys given twice or misspelt and `values.rs` for their values;
//! `signature.rs` reads the function, `docs.rs` its doc comments, `uri.rs` a resource's URI
//! template; `tool.rs`, `prompt.rs` and `resource.rs` put them together for each kind of item.

pub(crate) mod attr;
pub(crate) mod common;
pub(crate) mod docs;
pub(crate) mod prompt;
pub(crate) mod resource;
pub(crate) mod signature;
pub(crate) mod tool;
pub(crate) mod toolbox;
pub(crate) mod uri;
pub(crate) mod values;

use quote::ToTokens;

use crate::ctxt::Ctxt;

/// The kind of item an attribute makes of a function.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Tool,
    Prompt,
    Resource,
}

impl Kind {
    /// The attribute's name, which is also the item's noun in messages.
    pub(crate) fn noun(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Prompt => "prompt",
            Kind::Resource => "resource",
        }
    }

    /// What the attribute applies to, for the error on anything but a function.
    fn applies_to(self) -> &'static str {
        match self {
            Kind::Tool => "a function (`fn name(…)`), which becomes the tool",
            Kind::Prompt => "a function (`fn name(…)`) that returns the prompt's messages",
            Kind::Resource => "a function (`fn name(…)`) that returns the resource's contents",
        }
    }
}

/// The model of an item, as far as its attribute and function could be read.
pub(crate) enum Item {
    Tool(tool::ToolModel),
    Prompt(prompt::PromptModel),
    Resource(resource::ResourceModel),
}

impl Item {
    pub(crate) fn kind(&self) -> Kind {
        match self {
            Item::Tool(_) => Kind::Tool,
            Item::Prompt(_) => Kind::Prompt,
            Item::Resource(_) => Kind::Resource,
        }
    }

    /// The function as it is emitted again (what rustc rejects taken off).
    pub(crate) fn func(&self) -> &syn::ItemFn {
        match self {
            Item::Tool(m) => &m.func,
            Item::Prompt(m) => &m.func,
            Item::Resource(m) => &m.func,
        }
    }
}

/// Reads an item attribute's arguments and the function it is on.
pub(crate) fn item(
    cx: &Ctxt,
    kind: Kind,
    args: proc_macro2::TokenStream,
    func: syn::ItemFn,
) -> Item {
    match kind {
        Kind::Tool => Item::Tool(tool::parse(cx, args, func, None)),
        Kind::Prompt => Item::Prompt(prompt::parse(cx, args, func)),
        Kind::Resource => Item::Resource(resource::parse(cx, args, func)),
    }
}

/// An item attribute written on something other than a function: the tokens as written, and
/// the error saying what the attribute applies to.
pub(crate) struct NotAFunction {
    pub tokens: proc_macro2::TokenStream,
    pub error: syn::Error,
}

/// The function an item attribute is written on; anything else is reported at its keyword,
/// saying what the attribute applies to.
pub(crate) fn function(
    tokens: proc_macro2::TokenStream,
    kind: Kind,
) -> Result<syn::ItemFn, NotAFunction> {
    let item = match syn::parse2::<syn::Item>(tokens.clone()) {
        Ok(syn::Item::Fn(func)) => return Ok(func),
        Ok(item) => item,
        Err(error) => return Err(NotAFunction { tokens, error }),
    };
    let (what, at): (&str, proc_macro2::TokenStream) = match &item {
        syn::Item::Struct(i) => ("a struct", i.struct_token.to_token_stream()),
        syn::Item::Enum(i) => ("an enum", i.enum_token.to_token_stream()),
        syn::Item::Const(i) => ("a constant", i.const_token.to_token_stream()),
        syn::Item::Static(i) => ("a static", i.static_token.to_token_stream()),
        syn::Item::Impl(i) => ("an `impl` block", i.impl_token.to_token_stream()),
        syn::Item::Trait(i) => ("a trait", i.trait_token.to_token_stream()),
        syn::Item::Mod(i) => ("a module", i.mod_token.to_token_stream()),
        syn::Item::Type(i) => ("a type alias", i.type_token.to_token_stream()),
        syn::Item::Use(i) => ("a `use` item", i.use_token.to_token_stream()),
        other => ("this item", other.to_token_stream()),
    };
    let struct_hint = if kind == Kind::Tool && matches!(item, syn::Item::Struct(_)) {
        "; a struct of arguments is taken by the tool's function, marked `#[tool(args)]`"
    } else {
        ""
    };
    let error = syn::Error::new_spanned(
        at,
        format!(
            "`#[{}]` applies to {}, not to {what}{struct_hint}",
            kind.noun(),
            kind.applies_to()
        ),
    );
    Err(NotAFunction {
        tokens: item.into_token_stream(),
        error,
    })
}
