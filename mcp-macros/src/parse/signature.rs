//! What `#[tool]`, `#[prompt]` and `#[resource]` share: the function's signature, its
//! parameters (`Context` recognised by type, `#[header]` and `#[default]` read), and its return
//! type. Each is checked on its own here; how they fit the attribute is `validate`'s.

use mcp_grammar::header::{self, NameProblem, TOKEN_PUNCTUATION};
use quote::ToTokens;

use super::Kind;
use crate::ctxt::Ctxt;

/// What a parameter or signature problem is called for each kind of item.
impl Kind {
    /// Why parameter types must be concrete and owned.
    fn why_concrete(self) -> &'static str {
        match self {
            Kind::Tool => "its JSON Schema is built from the concrete type",
            Kind::Prompt => "the argument's text is parsed into the concrete type",
            Kind::Resource => "the URI variable's text is parsed into the concrete type",
        }
    }

    fn why_owned(self) -> &'static str {
        match self {
            Kind::Tool => "arguments are deserialised into it",
            Kind::Prompt => "the argument's text is parsed into it",
            Kind::Resource => "the URI variable's text is parsed into it",
        }
    }

    fn why_generic(self) -> &'static str {
        match self {
            Kind::Tool => "so their JSON Schema is known",
            Kind::Prompt => "so the arguments can be parsed into them",
            Kind::Resource => "so the URI variables can be parsed into them",
        }
    }

    /// Why a parameter takes no `#[serde(…)]`, and what to write instead.
    fn why_no_serde(self) -> &'static str {
        match self {
            Kind::Tool => {
                "a tool parameter takes no `#[serde(…)]` attributes: give a default with `#[default = 10]` (shown in the schema as `default`), or make it an `Option<T>`; for other serde options, take a struct with `#[tool(args)]`, whose fields take them"
            }
            Kind::Prompt => {
                "a prompt argument is text parsed with `FromStr`, so `#[serde(…)]` does not apply: for a default, make the parameter an `Option<T>` and use `unwrap_or` in the function"
            }
            Kind::Resource => {
                "a URI variable is text parsed with `FromStr`, so `#[serde(…)]` does not apply"
            }
        }
    }

    /// What to write after `->` when a prompt or resource has no return type.
    fn return_example(self) -> &'static str {
        match self {
            Kind::Tool => "",
            Kind::Prompt => {
                "add `-> String` (or `PromptMessage`, `Vec<PromptMessage>`, `GetPromptResult`)"
            }
            Kind::Resource => "add `-> String` (or `Vec<u8>`, `Json<T>`, `ResourceContents`)",
        }
    }

    /// What a parameter's name is.
    fn why_plain(self) -> &'static str {
        match self {
            Kind::Tool | Kind::Prompt => "the name is the argument's name",
            Kind::Resource => "the name is the URI variable's name",
        }
    }

    fn result(self) -> &'static str {
        match self {
            Kind::Tool => "a tool result",
            Kind::Prompt => "a prompt result",
            Kind::Resource => "resource contents",
        }
    }
}

pub(crate) struct Param {
    pub ident: syn::Ident,
    pub ty: syn::Type,
    pub kind: ParamKind,
    /// The parameter's doc attributes, moved to its property.
    pub docs: Vec<syn::Attribute>,
    /// `#[header]`: the argument is mirrored into the HTTP header `Mcp-Param-{name}`.
    pub header: Option<Header>,
    /// `#[default = 10]`: the value of a tool argument left out, also the schema's `default`.
    pub default: Option<syn::Expr>,
}

/// A `#[header]` or `#[header("Name")]` on a tool parameter.
pub(crate) struct Header {
    /// The name after `Mcp-Param-`.
    pub name: String,
    /// The attribute as written, for errors.
    pub attr: syn::Attribute,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParamKind {
    /// A `Context`, supplied by the runtime.
    Context,
    /// A `State<T>`, a value the server was given.
    State,
    /// The `&self` of a `#[toolbox]` method: the toolbox's value, a state of its type.
    Receiver,
    /// An argument from the client.
    Argument,
}

impl ParamKind {
    /// What the runtime supplies, named for messages about attributes that only arguments
    /// take.
    fn supplied(self) -> &'static str {
        match self {
            ParamKind::Context => "a `Context`",
            ParamKind::State => "a `State`",
            ParamKind::Receiver => "`self`",
            ParamKind::Argument => "an argument",
        }
    }
}

/// The parameter names as written, before any is rejected: a name that refers to a rejected
/// parameter (for its type or pattern) is not reported again as naming no parameter.
pub(crate) struct WrittenParams {
    pub names: Vec<String>,
    /// Whether a parameter is a pattern, which may be meant to be any of them.
    pub has_pattern: bool,
}

impl WrittenParams {
    pub(crate) fn of(sig: &syn::Signature) -> WrittenParams {
        let mut written = WrittenParams {
            names: Vec::new(),
            has_pattern: false,
        };
        for input in &sig.inputs {
            if let syn::FnArg::Typed(pat_type) = input {
                match &*pat_type.pat {
                    syn::Pat::Ident(p) => written.names.push(unraw(&p.ident)),
                    _ => written.has_pattern = true,
                }
            }
        }
        written
    }

    pub(crate) fn covers(&self, variable: &str) -> bool {
        self.has_pattern || self.names.iter().any(|n| n == variable)
    }
}

/// Reports what no item can have; a variadic is taken off the function, as rustc would
/// report it again.
pub(crate) fn check_signature(cx: &Ctxt, sig: &mut syn::Signature, item: Kind) {
    let noun = item.noun();
    if let syn::Safety::Unsafe(unsafety) = &sig.safety {
        cx.error_spanned_by(
            unsafety,
            format!("a {noun} cannot be an `unsafe fn`: clients call it with any arguments; make it safe and use `unsafe` blocks inside"),
        );
    }
    if !sig.generics.params.is_empty() {
        cx.error_spanned_by(
            &sig.generics,
            format!(
                "a {noun} cannot be generic: give its parameters concrete types, {}",
                item.why_generic()
            ),
        );
    } else if let Some(where_clause) = &sig.generics.where_clause {
        cx.error_spanned_by(
            where_clause,
            format!(
                "a {noun} cannot have a `where` clause: give its parameters concrete types, {}",
                item.why_generic()
            ),
        );
    }
    if let Some(variadic) = sig.variadic.take() {
        cx.error_spanned_by(
            &variadic,
            format!("a {noun} cannot be variadic: take a `Vec` parameter instead"),
        );
        if sig.inputs.trailing_punct() {
            sig.inputs.pop_punct();
        }
    }
}

/// A tool may return nothing; a prompt returns its messages and a resource its contents, so
/// for them a missing return type is reported on the signature, not as an unmet trait bound
/// on `()` somewhere in the attribute.
pub(crate) fn check_return_type(cx: &Ctxt, sig: &syn::Signature, item: Kind) {
    match &sig.output {
        syn::ReturnType::Type(_, ty) if matches!(**ty, syn::Type::ImplTrait(_)) => {
            cx.error_spanned_by(
                ty,
                format!(
                    "a {} must name its return type: `impl Trait` cannot be converted into {}",
                    item.noun(),
                    item.result()
                ),
            );
        }
        syn::ReturnType::Default if item != Kind::Tool => {
            // `fn name(…)`, where the return type would go.
            let mut tokens = sig.fn_token.to_token_stream();
            sig.ident.to_tokens(&mut tokens);
            sig.paren_token
                .surround(&mut tokens, |t| sig.inputs.to_tokens(t));
            cx.error_spanned_by(
                tokens,
                format!(
                    "a {} must return {}: {}",
                    item.noun(),
                    item.result(),
                    item.return_example()
                ),
            );
        }
        _ => {}
    }
}

/// The declared return type, if any.
pub(crate) fn return_type(func: &syn::ItemFn) -> Option<syn::Type> {
    match &func.sig.output {
        syn::ReturnType::Default => None,
        syn::ReturnType::Type(_, ty) => Some((**ty).clone()),
    }
}

/// Reads the parameters of an item's function; `method` when it is in a `#[toolbox]` block,
/// where it may take `&self`.
pub(crate) fn parse_params(
    cx: &Ctxt,
    func: &mut syn::ItemFn,
    item: Kind,
    method: bool,
) -> Vec<Param> {
    let noun = item.noun();
    let mut params = Vec::new();
    for input in &mut func.sig.inputs {
        let pat_type = match input {
            syn::FnArg::Receiver(receiver) => {
                if let Some(param) = receiver_param(cx, receiver, item, method) {
                    params.push(param);
                }
                continue;
            }
            syn::FnArg::Typed(pat_type) => pat_type,
        };
        // Doc comments on parameters are not allowed by rustc; they become argument
        // descriptions, so they are taken off the function in every case.
        let (docs, others): (Vec<_>, Vec<_>) = std::mem::take(&mut pat_type.attrs)
            .into_iter()
            .partition(|a| a.path().is_ident("doc"));
        let (headers, others): (Vec<_>, Vec<_>) = others
            .into_iter()
            .partition(|a| a.path().is_ident("header"));
        let (defaults, others): (Vec<_>, Vec<_>) = others
            .into_iter()
            .partition(|a| a.path().is_ident("default"));
        let (serde, others): (Vec<_>, Vec<_>) =
            others.into_iter().partition(|a| a.path().is_ident("serde"));
        for attr in &serde {
            cx.error_spanned_by(attr, item.why_no_serde());
        }
        pat_type.attrs = others;
        let ty = (*pat_type.ty).clone();
        let ident = match &*pat_type.pat {
            syn::Pat::Ident(p) if p.subpat.is_none() && p.by_ref.is_none() => p.ident.clone(),
            // A `State` is no argument, so it has no name to give: `State(db): State<Db>`
            // destructures it as axum's extractors are.
            _ if is_state(&ty) => syn::Ident::new("__mcp_state", proc_macro2::Span::call_site()),
            pat => {
                cx.error_spanned_by(
                    pat,
                    format!(
                        "a {noun} parameter must be a plain name (`city: String`), not a pattern: {}",
                        item.why_plain()
                    ),
                );
                continue;
            }
        };
        if check_param_type(cx, &ty, item) {
            continue;
        }
        let kind = if is_context(&ty) {
            ParamKind::Context
        } else if is_state(&ty) {
            ParamKind::State
        } else {
            ParamKind::Argument
        };
        let header = parse_header(cx, &headers, &ident, kind, item);
        let default = parse_default(cx, &defaults, kind, item);
        params.push(Param {
            ident,
            ty,
            kind,
            docs,
            header,
            default,
        });
    }
    params
}

/// Reads the `#[header]` attributes of one parameter: at most one, on a tool's argument,
/// naming a valid HTTP field name (by default the parameter's name, `tenant_id` →
/// `Tenant-Id`).
fn parse_header(
    cx: &Ctxt,
    attrs: &[syn::Attribute],
    ident: &syn::Ident,
    kind: ParamKind,
    item: Kind,
) -> Option<Header> {
    let (first, rest) = attrs.split_first()?;
    for extra in rest {
        cx.error_spanned_by(extra, "duplicate attribute `header`");
    }
    if item != Kind::Tool {
        cx.error_spanned_by(
            first,
            format!(
                "`#[header]` is for tool parameters: a {} argument is never sent in an HTTP header",
                item.noun()
            ),
        );
        return None;
    }
    if kind != ParamKind::Argument {
        cx.error_spanned_by(
            first,
            format!(
                "`#[header]` mirrors an argument from the client; {} is not one",
                kind.supplied()
            ),
        );
        return None;
    }
    let (name, at) = match &first.meta {
        syn::Meta::Path(_) => (header::default_name(&unraw(ident)), first.to_token_stream()),
        syn::Meta::List(list) => match syn::parse2::<syn::LitStr>(list.tokens.clone()) {
            Ok(lit) => (lit.value(), lit.to_token_stream()),
            Err(_) => {
                cx.error_spanned_by(
                    &list.tokens,
                    "the header name must be a string literal: `#[header(\"Region\")]`, or `#[header]` alone to name it after the parameter",
                );
                return None;
            }
        },
        syn::Meta::NameValue(nv) => {
            cx.error_spanned_by(
                nv,
                "write the header name in parentheses: `#[header(\"Region\")]`, or `#[header]` alone to name it after the parameter",
            );
            return None;
        }
    };
    if let Err(problem) = check_header_name(&name) {
        cx.error_spanned_by(at, problem);
        return None;
    }
    Some(Header {
        name,
        attr: first.clone(),
    })
}

const DEFAULT_EXAMPLE: &str = "`#[default = 10]`, `#[default = \"metric\"]` or `#[default = true]`";

/// Reads the `#[default = …]` of one parameter: at most one, on a tool's argument, a literal
/// (which is also the schema's `default`, so it must be known to the macro).
fn parse_default(
    cx: &Ctxt,
    attrs: &[syn::Attribute],
    kind: ParamKind,
    item: Kind,
) -> Option<syn::Expr> {
    let (first, rest) = attrs.split_first()?;
    for extra in rest {
        cx.error_spanned_by(extra, "duplicate attribute `default`");
    }
    if item != Kind::Tool {
        cx.error_spanned_by(
            first,
            format!(
                "`#[default]` is for tool parameters: make a {} parameter an `Option<T>` and use `unwrap_or` in the function",
                item.noun()
            ),
        );
        return None;
    }
    if kind != ParamKind::Argument {
        cx.error_spanned_by(
            first,
            format!(
                "`#[default]` gives an argument left out by the client a value; {} is not an argument",
                kind.supplied()
            ),
        );
        return None;
    }
    let syn::Meta::NameValue(nv) = &first.meta else {
        cx.error_spanned_by(
            first,
            format!("`#[default]` needs a value: {DEFAULT_EXAMPLE}"),
        );
        return None;
    };
    let literal = match &nv.value {
        syn::Expr::Lit(lit) => matches!(
            lit.lit,
            syn::Lit::Str(_) | syn::Lit::Int(_) | syn::Lit::Float(_) | syn::Lit::Bool(_)
        ),
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => matches!(
            &**expr,
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(_) | syn::Lit::Float(_),
                ..
            })
        ),
        _ => false,
    };
    if !literal {
        cx.error_spanned_by(
            &nv.value,
            format!(
                "`#[default = …]` takes a literal, which is also the schema's `default`: {DEFAULT_EXAMPLE}; for a default computed in code, make the parameter an `Option<T>` and use `unwrap_or_else` in the function"
            ),
        );
        return None;
    }
    Some(nv.value.clone())
}

/// An HTTP field name (`mcp_grammar::header`'s rules), with what to write instead.
fn check_header_name(name: &str) -> Result<(), String> {
    header::check_name(name).map_err(|problem| match problem {
        NameProblem::Empty => {
            "the header name is empty: name it, e.g. `#[header(\"Region\")]`".to_owned()
        }
        NameProblem::Character(c) => format!(
            "`{}` cannot be in an HTTP header name: use letters, digits and `-` (any of `{TOKEN_PUNCTUATION}` too)",
            c.escape_default()
        ),
    })
}

/// Reports types that can never be arguments; true when one was found.
fn check_param_type(cx: &Ctxt, ty: &syn::Type, item: Kind) -> bool {
    let noun = item.noun();
    match ty {
        syn::Type::ImplTrait(_) => {
            cx.error_spanned_by(
                ty,
                format!(
                    "a {noun} parameter must name its type, not `impl Trait`: {}",
                    item.why_concrete()
                ),
            );
            true
        }
        syn::Type::Reference(r) if is_state(&r.elem) => {
            cx.error_spanned_by(
                ty,
                "a `State` is taken by value: write `db: State<Db>` (it is a cheap handle to the value the server shares)",
            );
            true
        }
        syn::Type::Reference(r) if is_context(&r.elem) => {
            cx.error_spanned_by(
                ty,
                "the `Context` is taken by value: write `ctx: Context` (it is a cheap handle, cloned for each call)",
            );
            true
        }
        syn::Type::Reference(_) => {
            cx.error_spanned_by(
                ty,
                format!(
                    "a {noun} parameter must be an owned type (`String`, not `&str`): {}",
                    item.why_owned()
                ),
            );
            true
        }
        syn::Type::Paren(p) => check_param_type(cx, &p.elem, item),
        _ => false,
    }
}

/// The `self` of a method: `&self` in a `#[toolbox]` block, an error anywhere else.
fn receiver_param(cx: &Ctxt, receiver: &syn::Receiver, item: Kind, method: bool) -> Option<Param> {
    let noun = item.noun();
    if !method {
        let hint = if item == Kind::Tool {
            "a tool that takes `&self` is a method of a `#[toolbox]` block (`#[toolbox] impl MyServer { … }`, served with `.toolbox(value)`); otherwise move the tool out of the `impl` block"
        } else {
            "`self` parameters are not supported; move it out of the `impl` block, and take the value it needs as a `State<T>` parameter"
        };
        cx.error_spanned_by(receiver, format!("a {noun} is a free function: {hint}"));
        return None;
    }
    let by_shared_ref = matches!(receiver.kind, syn::ReceiverKind::Reference(_, _, None));
    if !by_shared_ref {
        cx.error_spanned_by(
            receiver,
            "a toolbox tool takes `&self`: calls run at the same time and share the value; keep what changes behind a lock (a `Mutex`, an atomic)",
        );
        return None;
    }
    Some(Param {
        ident: syn::Ident::new("self", receiver.self_token.span),
        ty: syn::parse_quote!(Self),
        kind: ParamKind::Receiver,
        docs: Vec::new(),
        header: None,
        default: None,
    })
}

/// A `State<T>` is recognised by the last segment of its path, with one type argument.
pub(crate) fn is_state(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Path(p) => {
            p.qself.is_none()
                && p.path.segments.last().is_some_and(|s| {
                    s.ident == "State"
                        && matches!(&s.arguments, syn::PathArguments::AngleBracketed(a)
                            if a.args.len() == 1
                                && matches!(a.args[0], syn::GenericArgument::Type(_)))
                })
        }
        syn::Type::Paren(p) => is_state(&p.elem),
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

/// A parameter of a prompt or resource: its argument travels as text and is parsed into
/// its type; it is optional when written `Option<T>`.
pub(crate) struct TextParam {
    pub param: Param,
    /// Whether the argument must be given (its type is not `Option<T>`).
    pub required: bool,
    /// The type the argument's text is parsed into (`T` of `Option<T>`).
    pub parsed: syn::Type,
}

/// The parameters of a prompt or resource, each with the type its text is parsed into.
pub(crate) fn parse_text_params(cx: &Ctxt, func: &mut syn::ItemFn, item: Kind) -> Vec<TextParam> {
    parse_params(cx, func, item, false)
        .into_iter()
        .map(|param| {
            let inner = option_inner(&param.ty).cloned();
            TextParam {
                required: inner.is_none(),
                parsed: inner.unwrap_or_else(|| param.ty.clone()),
                param,
            }
        })
        .collect()
}

/// The `T` of a type written `Option<T>` (by its last path segment), if it is one.
pub(crate) fn option_inner(ty: &syn::Type) -> Option<&syn::Type> {
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Option" {
        return None;
    }
    match &last.arguments {
        syn::PathArguments::AngleBracketed(args) if args.args.len() == 1 => match &args.args[0] {
            syn::GenericArgument::Type(inner) => Some(inner),
            _ => None,
        },
        _ => None,
    }
}

/// An identifier without its `r#`.
pub(crate) fn unraw(ident: &syn::Ident) -> String {
    let s = ident.to_string();
    s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_name_that_is_no_http_token_is_refused_with_the_fix() {
        assert!(check_header_name("Tenant-Id").is_ok());
        let empty = check_header_name("").unwrap_err();
        assert!(empty.contains("`#[header(\"Region\")]`"), "{empty}");
        let space = check_header_name("Tenant Id").unwrap_err();
        assert!(
            space.starts_with("` ` cannot be in an HTTP header name"),
            "{space}"
        );
        assert!(check_header_name("Région").is_err());
    }
}
