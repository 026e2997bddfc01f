//! A resource's URI template, read with `mcp_grammar::uri_template` — the grammar the runtime
//! parses it with, so a template that compiles also builds — with every problem reported inside
//! the literal, and one rule of the macro's own on top: a variable names a parameter.

use std::ops::Range;

use mcp_grammar::uri_template::{self as grammar, Operator, ProblemKind};
use proc_macro2::Span;

use crate::ctxt::Ctxt;

/// One variable of the template, with where it is written.
pub(crate) struct Variable {
    pub name: String,
    /// A `{?…}` variable, which may be absent.
    pub query: bool,
    /// Byte range of its expression inside the literal's value.
    pub range: Range<usize>,
}

/// The variables of a URI template; `None` when the template has a problem, each reported
/// inside the literal.
pub(crate) fn template_variables(cx: &Ctxt, uri: &syn::LitStr) -> Option<Vec<Variable>> {
    let text = uri.value();
    if text.is_empty() {
        cx.error_spanned_by(
            uri,
            "a resource needs a URI: `#[resource(\"file:///notes.txt\")]`",
        );
        return None;
    }
    let template = grammar::parse(&text);
    let written = |range: &Range<usize>| &text[range.clone()];
    for problem in &template.problems {
        let range = &problem.range;
        let message = match &problem.kind {
            ProblemKind::UnmatchedClose => {
                "`}` without a matching `{` in the URI template".to_owned()
            }
            ProblemKind::Unclosed => "`{` without a matching `}` in the URI template".to_owned(),
            ProblemKind::EmptyExpression => {
                "an empty expression `{}` in the URI template: name a variable, as in `{table}`"
                    .to_owned()
            }
            ProblemKind::UnsupportedOperator(c) => format!(
                "the URI template operator `{c}` in `{}` is not supported; use `{{var}}`, `{{+var}}` or `{{?a,b}}`",
                written(range)
            ),
            ProblemKind::QueryNotLast { query } => {
                cx.error_at(
                    span_inside(uri, query),
                    format!(
                        "the query expression `{}` must end the URI template",
                        written(query)
                    ),
                );
                continue;
            }
            ProblemKind::AdjacentVariables => format!(
                "`{}` follows another variable directly: separate them with literal text, as in `{{a}}/{{b}}`, so a URI can be split between them",
                written(range)
            ),
            ProblemKind::SeveralNamesOutsideQuery => format!(
                "`{}` lists several variables, which only a query expression `{{?a,b}}` may do",
                written(range)
            ),
            ProblemKind::MissingName => {
                format!("a variable name is missing in `{}`", written(range))
            }
            ProblemKind::InvalidName(name) => invalid_name(name),
            // A name no parameter can have is reported as that, wherever it is written.
            ProblemKind::DuplicateName(name) if !names_a_parameter(name) => invalid_name(name),
            ProblemKind::DuplicateName(name) => {
                format!("the variable `{name}` appears twice in the URI template")
            }
        };
        cx.error_at(span_inside(uri, range), message);
    }
    let mut well_formed = template.is_well_formed();
    // The grammar's names may start with a digit; a parameter's may not.
    for variable in &template.variables {
        if !names_a_parameter(variable.name) {
            cx.error_at(
                span_inside(uri, &variable.range),
                invalid_name(variable.name),
            );
            well_formed = false;
        }
    }
    let variables = template.variables.iter().map(|v| Variable {
        name: v.name.to_owned(),
        query: v.operator == Operator::Query,
        range: v.range.clone(),
    });
    well_formed.then(|| variables.collect())
}

/// Whether a variable name the grammar accepts can also name a parameter: not when it starts
/// with a digit.
fn names_a_parameter(name: &str) -> bool {
    !name.starts_with(|c: char| c.is_ascii_digit())
}

/// A variable names a parameter: ASCII letters, digits and `_`, not starting with a digit.
fn invalid_name(name: &str) -> String {
    let mut fixed: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if fixed.starts_with(|c: char| c.is_ascii_digit()) {
        fixed.insert(0, '_');
    }
    format!(
        "`{name}` is not a valid URI template variable name: it is the name of a parameter, so use ASCII letters, digits and `_`, not starting with a digit: `{{{fixed}}}`"
    )
}

/// The parameter that binds a variable: `r#type` for `{type}`.
pub(crate) fn parameter_name(variable: &str) -> String {
    if syn::parse_str::<syn::Ident>(variable).is_ok() {
        variable.to_owned()
    } else {
        format!("r#{variable}")
    }
}

/// A span inside the literal where rustc can give one (nightly); the whole literal otherwise.
pub(crate) fn span_inside(lit: &syn::LitStr, range: &Range<usize>) -> Span {
    // The token includes the opening quote (or `r#"`), so offsets in the value shift by it.
    let token = lit.token().to_string();
    let shift = token.find('"').map_or(0, |q| q + 1);
    lit.token()
        .subspan(range.start + shift..range.end + shift)
        .unwrap_or_else(|| lit.span())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invalid_variable_name_comes_with_one_that_can_name_a_parameter() {
        let problem = invalid_name("table-name");
        assert!(problem.contains("`{table_name}`"), "{problem}");
        let problem = invalid_name("2nd");
        assert!(problem.contains("`{_2nd}`"), "{problem}");
    }

    fn problems(template: &str) -> Vec<String> {
        let cx = Ctxt::new();
        let lit = syn::LitStr::new(template, Span::call_site());
        let variables = template_variables(&cx, &lit);
        match cx.check() {
            Ok(()) => {
                assert!(variables.is_some());
                Vec::new()
            }
            Err(errors) => {
                assert!(
                    variables.is_none(),
                    "a template with problems binds nothing"
                );
                errors.into_iter().map(|e| e.to_string()).collect()
            }
        }
    }

    #[test]
    fn every_problem_of_a_template_is_reported() {
        assert_eq!(
            problems("db://{schema}/{table}{?limit}"),
            Vec::<String>::new()
        );
        let found = problems("db://{a}{b}/{#c}/{d");
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(found[0].starts_with("`{b}` follows another variable directly"));
        assert!(found[1].starts_with("the URI template operator `#` in `{#c}`"));
        assert!(found[2].starts_with("`{` without a matching `}`"));
    }

    #[test]
    fn a_name_that_cannot_name_a_parameter_is_reported_as_that_wherever_it_is() {
        let found = problems("log://{2fa}/{2fa}");
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(
            found.iter().all(|p| p.starts_with("`2fa` is not a valid")),
            "{found:?}"
        );
        // Not an operator of RFC 6570: the start of a name that is not valid.
        assert_eq!(
            problems("log://{-x}"),
            [invalid_name("-x")],
            "the runtime reads it the same way"
        );
    }

    #[test]
    fn a_keyword_variable_binds_a_raw_parameter() {
        assert_eq!(parameter_name("table"), "table");
        assert_eq!(parameter_name("type"), "r#type");
    }
}
