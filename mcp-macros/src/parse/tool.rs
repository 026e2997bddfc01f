//! `#[tool(…)]` on a function: its attribute, its parameters and its return type.

use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;

use super::docs::Docs;
use super::{Attr, Ctxt, suggestion};

const KEYS: &[&str] = &["name", "title", "description", "annotations", "args"];
const ANNOTATION_KEYS: &[&str] = &["read_only", "destructive", "idempotent", "open_world"];

/// A validated `#[tool]` function.
pub(crate) struct ToolModel {
    /// The function as it is emitted again (parameter doc comments removed).
    pub func: syn::ItemFn,
    /// The name on the wire.
    pub name: String,
    pub title: Option<syn::LitStr>,
    /// The description: the attribute's override, or the function's doc comment.
    pub description: Description,
    pub annotations: Annotations,
    pub params: Vec<Param>,
    /// Whether the single non-context parameter is the whole argument object.
    pub args_struct: bool,
    pub return_type: Option<syn::Type>,
}

pub(crate) enum Description {
    Override(syn::LitStr),
    Docs(Docs),
}

#[derive(Default)]
pub(crate) struct Annotations {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
}

pub(crate) struct Param {
    pub ident: syn::Ident,
    pub ty: syn::Type,
    pub kind: ParamKind,
    /// The parameter's doc attributes, moved to its property.
    pub docs: Vec<syn::Attribute>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParamKind {
    /// A `Context`, supplied by the runtime.
    Context,
    /// An argument from the client.
    Argument,
}

/// Parses and validates; on error, returns the function stripped of what would cause
/// secondary errors, with every problem found.
pub(crate) fn parse(
    args: TokenStream,
    mut func: syn::ItemFn,
) -> Result<ToolModel, Box<(syn::ItemFn, syn::Error)>> {
    let cx = Ctxt::new();
    let attr = parse_attr(&cx, args);
    let params = parse_params(&cx, &mut func);
    check_signature(&cx, &func.sig);

    let name = match &attr.name {
        Some(lit) => {
            let name = lit.value();
            if let Err(problem) = check_tool_name(&name) {
                cx.error_spanned_by(lit, problem);
            }
            name
        }
        None => func.sig.ident.unraw_string(),
    };
    let arguments = params
        .iter()
        .filter(|p| p.kind == ParamKind::Argument)
        .count();
    if let Some(span) = attr.args
        && arguments != 1
    {
        cx.error_at(
            span,
            format!("`args` needs exactly one parameter besides `Context`, the argument struct; this function has {arguments}"),
        );
    }
    // A single parameter named `args` is the argument struct, as if `#[tool(args)]` were given.
    let args_struct = attr.args.is_some()
        || (arguments == 1
            && params
                .iter()
                .any(|p| p.kind == ParamKind::Argument && p.ident == "args"));
    let return_type = match &func.sig.output {
        syn::ReturnType::Default => None,
        syn::ReturnType::Type(_, ty) => Some((**ty).clone()),
    };
    let description = match attr.description {
        Some(lit) => Description::Override(lit),
        None => Description::Docs(Docs::from_attrs(&func.attrs)),
    };
    match cx.check() {
        Ok(()) => Ok(ToolModel {
            func,
            name,
            title: attr.title,
            description,
            annotations: attr.annotations,
            params,
            args_struct,
            return_type,
        }),
        Err(e) => Err(Box::new((func, e))),
    }
}

struct ToolAttr {
    name: Option<syn::LitStr>,
    title: Option<syn::LitStr>,
    description: Option<syn::LitStr>,
    annotations: Annotations,
    args: Option<Span>,
}

fn parse_attr(cx: &Ctxt, args: TokenStream) -> ToolAttr {
    let mut name = Attr::none(cx, "name");
    let mut title = Attr::none(cx, "title");
    let mut description = Attr::none(cx, "description");
    let mut args_flag = Attr::none(cx, "args");
    let mut read_only = Attr::none(cx, "read_only");
    let mut destructive = Attr::none(cx, "destructive");
    let mut idempotent = Attr::none(cx, "idempotent");
    let mut open_world = Attr::none(cx, "open_world");

    let parser = syn::meta::parser(|meta| {
        let key = meta
            .path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        match key.as_str() {
            "name" => name.set(&meta.path, meta.value()?.parse::<syn::LitStr>()?),
            "title" => title.set(&meta.path, meta.value()?.parse::<syn::LitStr>()?),
            "description" => description.set(&meta.path, meta.value()?.parse::<syn::LitStr>()?),
            "args" => args_flag.set(&meta.path, meta.path.span()),
            "annotations" => meta.parse_nested_meta(|hint| {
                let key = hint
                    .path
                    .get_ident()
                    .map(ToString::to_string)
                    .unwrap_or_default();
                let value = if hint.input.peek(syn::Token![=]) {
                    hint.value()?.parse::<syn::LitBool>()?.value
                } else {
                    true
                };
                match key.as_str() {
                    "read_only" => read_only.set(&hint.path, value),
                    "destructive" => destructive.set(&hint.path, value),
                    "idempotent" => idempotent.set(&hint.path, value),
                    "open_world" => open_world.set(&hint.path, value),
                    _ => {
                        return Err(hint.error(format!(
                            "unknown annotation `{}`{}",
                            path_text(&hint.path),
                            suggestion(&key, ANNOTATION_KEYS)
                        )));
                    }
                }
                Ok(())
            })?,
            _ => {
                // Skip a value, if any, so the next keys are still read.
                if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                } else if meta.input.peek(syn::token::Paren) {
                    let _ = meta.parse_nested_meta(|m| {
                        if m.input.peek(syn::Token![=]) {
                            let _: syn::Expr = m.value()?.parse()?;
                        }
                        Ok(())
                    });
                }
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
    if let Err(e) = syn::parse::Parser::parse2(parser, args) {
        cx.syn_error(e);
    }
    ToolAttr {
        name: name.get(),
        title: title.get(),
        description: description.get(),
        args: args_flag.get(),
        annotations: Annotations {
            read_only: read_only.get(),
            destructive: destructive.get(),
            idempotent: idempotent.get(),
            open_world: open_world.get(),
        },
    }
}

fn path_text(path: &syn::Path) -> String {
    quote::quote!(#path).to_string().replace(' ', "")
}

fn check_signature(cx: &Ctxt, sig: &syn::Signature) {
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        cx.error_spanned_by(
            &sig.generics,
            "a tool cannot be generic: its parameter types must be concrete so their JSON Schema is known",
        );
    }
    if let Some(unsafety) = &sig.unsafety {
        cx.error_spanned_by(unsafety, "a tool cannot be an `unsafe fn`");
    }
    if let Some(variadic) = &sig.variadic {
        cx.error_spanned_by(variadic, "a tool cannot be variadic");
    }
    if let syn::ReturnType::Type(_, ty) = &sig.output
        && let syn::Type::ImplTrait(_) = &**ty
    {
        cx.error_spanned_by(
            ty,
            "a tool must name its return type: `impl Trait` cannot be converted into a tool result",
        );
    }
}

fn parse_params(cx: &Ctxt, func: &mut syn::ItemFn) -> Vec<Param> {
    let mut params = Vec::new();
    for input in &mut func.sig.inputs {
        let pat_type = match input {
            syn::FnArg::Receiver(receiver) => {
                cx.error_spanned_by(
                    &*receiver,
                    "a tool is a free function: `self` parameters are not supported; move the tool out of the `impl` block",
                );
                continue;
            }
            syn::FnArg::Typed(pat_type) => pat_type,
        };
        // Doc comments on parameters are not allowed by rustc; they become property
        // descriptions, so they are taken off the function in every case.
        let (docs, others): (Vec<_>, Vec<_>) = std::mem::take(&mut pat_type.attrs)
            .into_iter()
            .partition(|a| a.path().is_ident("doc"));
        pat_type.attrs = others;
        let ident = match &*pat_type.pat {
            syn::Pat::Ident(p) if p.subpat.is_none() && p.by_ref.is_none() => p.ident.clone(),
            pat => {
                cx.error_spanned_by(
                    pat,
                    "a tool parameter must be a plain name (`city: String`), not a pattern: the name is the argument's name",
                );
                continue;
            }
        };
        let ty = (*pat_type.ty).clone();
        if check_param_type(cx, &ty) {
            continue;
        }
        let kind = if is_context(&ty) {
            ParamKind::Context
        } else {
            ParamKind::Argument
        };
        params.push(Param {
            ident,
            ty,
            kind,
            docs,
        });
    }
    params
}

/// Reports types that can never be arguments; true when one was found.
fn check_param_type(cx: &Ctxt, ty: &syn::Type) -> bool {
    match ty {
        syn::Type::ImplTrait(_) => {
            cx.error_spanned_by(
                ty,
                "a tool parameter cannot be `impl Trait`: its concrete type is needed for the JSON Schema",
            );
            true
        }
        syn::Type::Reference(_) => {
            cx.error_spanned_by(
                ty,
                "a tool parameter must be an owned type (`String`, not `&str`): arguments are deserialised into it",
            );
            true
        }
        syn::Type::Paren(p) => check_param_type(cx, &p.elem),
        _ => false,
    }
}

/// A `Context` is recognised by the last segment of its path.
fn is_context(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Path(p) => {
            p.qself.is_none()
                && p.path
                    .segments
                    .last()
                    .is_some_and(|s| s.ident == "Context" && s.arguments.is_none())
        }
        syn::Type::Paren(p) => is_context(&p.elem),
        _ => false,
    }
}

/// MCP 2025-11-25: tool names are 1 to 128 characters of `A-Z a-z 0-9 _ - .`.
fn check_tool_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 128 {
        return Err(format!(
            "a tool name must be 1 to 128 characters long; this one has {}",
            name.chars().count()
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Err(format!(
            "a tool name may contain only ASCII letters, digits, `_`, `-` and `.`; `{c}` is not allowed"
        ));
    }
    Ok(())
}

trait UnrawString {
    fn unraw_string(&self) -> String;
}

impl UnrawString for syn::Ident {
    fn unraw_string(&self) -> String {
        let s = self.to_string();
        s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_follow_the_2025_11_25_rules() {
        assert!(check_tool_name("get_weather.v2-beta").is_ok());
        assert!(check_tool_name("").is_err());
        assert!(check_tool_name("has space").is_err());
        assert!(check_tool_name(&"x".repeat(129)).is_err());
        assert!(check_tool_name(&"x".repeat(128)).is_ok());
    }
}
