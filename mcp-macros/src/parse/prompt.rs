//! `#[prompt(…)]` on a function: its attribute (the shared keys and `complete`), its arguments
//! (text parsed with `FromStr`, optional when written `Option<T>`), and its return type.

use proc_macro2::{TokenStream, TokenTree};

use super::Kind;
use super::common::{Common, CommonKeys, CompleteEntry, Examples, parse_complete, read_keys};
use super::signature::{
    TextParam, WrittenParams, check_return_type, check_signature, parse_text_params, return_type,
};
use crate::ctxt::Ctxt;

const KEYS: &[&str] = &[
    "name",
    "title",
    "description",
    "complete",
    "icon",
    "meta",
    "scopes",
];
const EXAMPLES: Examples = Examples {
    name: "code_review",
    title: "Code review",
    description: "Review the changes on a branch.",
    meta: "{\"team\": \"search\"}",
};

/// A `#[prompt]` function.
pub(crate) struct PromptModel {
    pub func: syn::ItemFn,
    pub common: Common,
    pub params: Vec<TextParam>,
    /// The parameters as written, before any was rejected.
    pub written: WrittenParams,
    pub completions: Vec<CompleteEntry>,
    pub return_type: Option<syn::Type>,
}

/// Reads the attribute and the function, each on its own.
pub(crate) fn parse(cx: &Ctxt, args: TokenStream, mut func: syn::ItemFn) -> PromptModel {
    let mut common = CommonKeys::new(cx, &EXAMPLES);
    let mut completions = Vec::new();
    let args = without_leading_literal(cx, args);
    read_keys(cx, args, &mut common, KEYS, |key, meta| {
        match key {
            "complete" => parse_complete(cx, meta, "language", &mut completions)?,
            _ => return Ok(false),
        }
        Ok(true)
    });
    let common = common.finish();
    if let Some(lit) = &common.name
        && lit.value().is_empty()
    {
        cx.error_spanned_by(lit, "a prompt name must not be empty");
    }
    let written = WrittenParams::of(&func.sig);
    check_signature(cx, &mut func.sig, Kind::Prompt);
    let params = parse_text_params(cx, &mut func, Kind::Prompt);
    check_return_type(cx, &func.sig, Kind::Prompt);
    PromptModel {
        common: Common::new(common, &func),
        return_type: return_type(&func),
        func,
        params,
        written,
        completions,
    }
}

/// `#[prompt("code_review")]` is reported as a key left out (syn would say "unexpected literal
/// in nested attribute"); the keys after it are still read.
fn without_leading_literal(cx: &Ctxt, args: TokenStream) -> TokenStream {
    let mut tokens = args.clone().into_iter().peekable();
    let Some(TokenTree::Literal(lit)) = tokens.next() else {
        return args;
    };
    cx.error_spanned_by(
        &lit,
        "`#[prompt(…)]` takes keys, not a bare value: `#[prompt(name = \"code_review\")]` or `#[prompt(description = \"…\")]`",
    );
    if let Some(TokenTree::Punct(p)) = tokens.peek()
        && p.as_char() == ','
    {
        tokens.next();
    }
    tokens.collect()
}
