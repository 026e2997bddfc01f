//! `#[prompt(…)]` on a function: its attribute, its arguments (text parsed with `FromStr`,
//! optional when written `Option<T>`), and its return type.

use proc_macro2::{TokenStream, TokenTree};

use super::extras::{CompleteEntry, Icon, parse_complete, parse_icon};
pub(crate) use super::signature::Description;
use super::signature::{
    Item, ParamKind, TextParam, WrittenParams, check_return_type, check_signature,
    parse_text_params, return_type, unraw,
};
use super::values::{key_text, path_text, skip_value, string_value};
use super::{Attr, Ctxt, suggestion};

const KEYS: &[&str] = &["name", "title", "description", "complete", "icon", "meta"];

/// A validated `#[prompt]` function.
pub(crate) struct PromptModel {
    pub func: syn::ItemFn,
    pub name: String,
    pub title: Option<syn::LitStr>,
    pub description: Description,
    pub icons: Vec<Icon>,
    pub meta: Option<syn::LitStr>,
    pub params: Vec<TextParam>,
    pub completions: Vec<CompleteEntry>,
    pub return_type: Option<syn::Type>,
}

pub(crate) fn parse(
    args: TokenStream,
    mut func: syn::ItemFn,
) -> Result<PromptModel, Box<(syn::ItemFn, syn::Error)>> {
    let cx = Ctxt::new();
    let attr = parse_attr(&cx, args);
    if let Some(lit) = &attr.name
        && lit.value().is_empty()
    {
        cx.error_spanned_by(lit, "a prompt name must not be empty");
    }
    let written = WrittenParams::of(&func.sig);
    check_signature(&cx, &mut func.sig, Item::Prompt);
    let params = parse_text_params(&cx, &mut func, Item::Prompt);
    check_return_type(&cx, &func.sig, Item::Prompt);
    check_completions(&cx, &attr.completions, &params, &written);
    let name = attr
        .name
        .as_ref()
        .map_or_else(|| unraw(&func.sig.ident), syn::LitStr::value);
    let return_type = return_type(&func);
    let description = Description::new(attr.description, &func.attrs);
    match cx.check() {
        Ok(()) => Ok(PromptModel {
            func,
            name,
            title: attr.title,
            description,
            icons: attr.icons,
            meta: attr.meta,
            params,
            completions: attr.completions,
            return_type,
        }),
        Err(e) => Err(Box::new((func, e))),
    }
}

fn check_completions(
    cx: &Ctxt,
    completions: &[CompleteEntry],
    params: &[TextParam],
    written: &WrittenParams,
) {
    let names: Vec<String> = params
        .iter()
        .filter(|p| p.param.kind == ParamKind::Argument)
        .map(|p| unraw(&p.param.ident))
        .collect();
    for entry in completions {
        let argument = unraw(&entry.argument);
        // A rejected parameter has its own error; a `Context` is no argument.
        let rejected =
            written.covers(&argument) && !params.iter().any(|p| unraw(&p.param.ident) == argument);
        if !names.contains(&argument) && !rejected {
            let known: Vec<&str> = names.iter().map(String::as_str).collect();
            let is_context = params
                .iter()
                .any(|p| p.param.kind == ParamKind::Context && unraw(&p.param.ident) == argument);
            let hint = if is_context {
                "; it is the `Context`, which the runtime supplies".to_owned()
            } else if !known.is_empty() {
                suggestion(&argument, &known)
            } else if written.names.is_empty() && !written.has_pattern {
                "; it takes no arguments".to_owned()
            } else {
                String::new()
            };
            cx.error_spanned_by(
                &entry.argument,
                format!("the prompt has no argument `{argument}` to complete{hint}"),
            );
        }
    }
}

struct PromptAttr {
    name: Option<syn::LitStr>,
    title: Option<syn::LitStr>,
    description: Option<syn::LitStr>,
    icons: Vec<Icon>,
    meta: Option<syn::LitStr>,
    completions: Vec<CompleteEntry>,
}

fn parse_attr(cx: &Ctxt, args: TokenStream) -> PromptAttr {
    let mut name = Attr::none(cx, "name");
    let mut title = Attr::none(cx, "title");
    let mut description = Attr::none(cx, "description");
    let mut meta_json = Attr::none(cx, "meta");
    let mut icons = Vec::new();
    let mut completions = Vec::new();
    let parser = syn::meta::parser(|meta| {
        let key = key_text(&meta);
        match key.as_str() {
            "name" => {
                if let Some(lit) = string_value(cx, &meta, "code_review")? {
                    name.set(&meta.path, lit);
                }
            }
            "title" => {
                if let Some(lit) = string_value(cx, &meta, "Code review")? {
                    title.set(&meta.path, lit);
                }
            }
            "description" => {
                if let Some(lit) = string_value(cx, &meta, "Review the changes on a branch.")? {
                    description.set(&meta.path, lit);
                }
            }
            "meta" => {
                if let Some(lit) = string_value(cx, &meta, "{\"team\": \"search\"}")? {
                    meta_json.set(&meta.path, lit);
                }
            }
            "icon" => icons.extend(parse_icon(cx, &meta)?),
            "complete" => parse_complete(cx, &meta, "language", &mut completions)?,
            _ => {
                skip_value(&meta)?;
                cx.error_spanned_by(
                    &meta.path,
                    format!(
                        "unknown attribute `{}`{}",
                        path_text(&meta.path),
                        suggestion(&key, KEYS)
                    ),
                );
            }
        }
        Ok(())
    });
    if let Err(e) = syn::parse::Parser::parse2(parser, without_leading_literal(cx, args)) {
        cx.syn_error(e);
    }
    PromptAttr {
        name: name.get(),
        title: title.get(),
        description: description.get(),
        icons,
        meta: meta_json.get(),
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
