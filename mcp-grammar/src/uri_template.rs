//! URI templates as resource templates write them: the part of RFC 6570 that the runtime
//! matches URIs back against.
//!
//! ```text
//! template      = *( literal / expression )
//! expression    = "{" [ operator ] variable-list "}"
//! operator      = "+" / "?"                  ; {+var} reserved, {?a,b} form-style query
//! variable-list = name *( "," name )
//! name          = 1*( ALPHA / DIGIT / "_" )
//! literal       = any characters but "{" and "}"
//! ```
//!
//! and, between the expressions:
//!
//! - RFC 6570's other operators (`#`, `.`, `/`, `;`, `&`, and the reserved `=`, `,`, `!`,
//!   `@`, `|`) are refused: the runtime does not match them.
//! - Only a query expression lists several variables, and it ends the template.
//! - Two `{var}` or `{+var}` expressions are separated by literal text, so a URI can be split
//!   between them.
//! - A variable appears once.
//!
//! [`parse`] reads a template and finds every problem, in the order of the text; within one
//! expression: its operator, each name, the list, and then whether it may follow what it
//! follows.

use std::ops::Range;

/// The operator of an expression: what follows its `{`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    /// `{var}`: simple expansion, one path segment.
    Simple,
    /// `{+var}`: reserved expansion, which may hold `/`.
    Reserved,
    /// `{?a,b}`: form-style query expansion, every variable optional.
    Query,
    /// Another operator of RFC 6570 (section 2.2), which templates here do not support.
    Unsupported(char),
}

impl Operator {
    /// RFC 6570's operator characters besides `+` and `?`: level 2 and 3 operators, and
    /// those reserved for future extensions.
    const OTHERS: &'static str = "#./;&=,!@|";

    /// The operator an expression's text starts with, and the variable list after it.
    fn split(expression: &str) -> (Operator, &str) {
        match expression.chars().next() {
            Some('+') => (Operator::Reserved, &expression[1..]),
            Some('?') => (Operator::Query, &expression[1..]),
            Some(c) if Operator::OTHERS.contains(c) => {
                (Operator::Unsupported(c), &expression[c.len_utf8()..])
            }
            _ => (Operator::Simple, expression),
        }
    }

    /// Whether its variables are a run of the URI's path (`{var}`, `{+var}`), which literal
    /// text must separate from the next one.
    pub fn is_path(self) -> bool {
        matches!(self, Operator::Simple | Operator::Reserved)
    }
}

/// One `{…}` of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expression<'a> {
    /// What follows the `{`.
    pub operator: Operator,
    /// The names listed after the operator, as written (split at `,`).
    pub names: Vec<&'a str>,
    /// Where it is in the template, braces included.
    pub range: Range<usize>,
}

/// A template's text, read as literal text and expressions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Text between expressions, never empty.
    Literal {
        /// The text.
        text: &'a str,
        /// Where it is in the template.
        range: Range<usize>,
    },
    /// A `{…}`.
    Expression(Expression<'a>),
}

/// A variable of a template: a valid name, listed once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variable<'a> {
    /// Its name.
    pub name: &'a str,
    /// The operator of its expression.
    pub operator: Operator,
    /// Where its expression is in the template, braces included.
    pub range: Range<usize>,
}

/// What is wrong with a template, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem<'a> {
    /// What is wrong.
    pub kind: ProblemKind<'a>,
    /// The bytes of the template it is about: the expression (braces included), the brace
    /// that has no match, or what follows a query expression.
    pub range: Range<usize>,
}

/// The kinds of [`Problem`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProblemKind<'a> {
    /// A `}` with no `{` before it. The rest of the template is not read.
    UnmatchedClose,
    /// A `{` with no `}` after it. The rest of the template is not read.
    Unclosed,
    /// `{}`.
    EmptyExpression,
    /// An operator of RFC 6570 that is not supported (see [`Operator::Unsupported`]).
    UnsupportedOperator(char),
    /// Text after a query expression. The problem's range is what follows it: the next
    /// expression, or else the literal text up to where the template ends or stops being
    /// read.
    QueryNotLast {
        /// The query expression, braces included.
        query: Range<usize>,
    },
    /// A `{var}` or `{+var}` directly after another.
    AdjacentVariables,
    /// A `{var}` or `{+var}` listing several names, which only a query expression may.
    SeveralNamesOutsideQuery,
    /// An empty name in a list: `{a,}`, `{?}`.
    MissingName,
    /// A name with a character other than ASCII letters, digits and `_`.
    InvalidName(&'a str),
    /// A name that another expression (or the same one) already has.
    DuplicateName(&'a str),
}

/// A template read by [`parse`]: its pieces, its variables, and what is wrong with it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Template<'a> {
    /// The literal text and expressions, in order, as far as the template could be read.
    pub pieces: Vec<Piece<'a>>,
    /// The variables with valid names, each once, in order.
    pub variables: Vec<Variable<'a>>,
    /// Every problem found, in the order of the text; the template is well-formed when
    /// there is none.
    pub problems: Vec<Problem<'a>>,
}

impl Template<'_> {
    /// Whether the template has no problem.
    pub fn is_well_formed(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Whether `name` may name a variable: one or more ASCII letters, digits and `_`.
///
/// ```
/// use mcp_grammar::uri_template::is_variable_name;
///
/// assert!(is_variable_name("table_2"));
/// assert!(!is_variable_name("table-name"));
/// assert!(!is_variable_name(""));
/// ```
pub fn is_variable_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Reads a template, finding every problem in it.
///
/// ```
/// use mcp_grammar::uri_template::{Operator, ProblemKind, parse};
///
/// let template = parse("db://{schema}/{+path}{?limit,offset}");
/// assert!(template.is_well_formed());
/// let names: Vec<&str> = template.variables.iter().map(|v| v.name).collect();
/// assert_eq!(names, ["schema", "path", "limit", "offset"]);
/// assert_eq!(template.variables[1].operator, Operator::Reserved);
///
/// let broken = parse("db://{a}{b}/{#c}");
/// let kinds: Vec<&ProblemKind> = broken.problems.iter().map(|p| &p.kind).collect();
/// assert_eq!(kinds, [&ProblemKind::AdjacentVariables, &ProblemKind::UnsupportedOperator('#')]);
/// assert_eq!(broken.problems[0].range, 8..11);
/// ```
pub fn parse(text: &str) -> Template<'_> {
    let mut template = Template::default();
    let mut rest = 0;
    // Where the last `{var}` or `{+var}` ended, to find one that follows it directly.
    let mut previous_path_end = None;
    // A query expression read last, which nothing may follow.
    let mut query = None;
    loop {
        let Some(open) = text[rest..].find(['{', '}']).map(|i| rest + i) else {
            template.literal(text, rest..text.len());
            template.after_query(&mut query, rest..text.len());
            return template;
        };
        template.literal(text, rest..open);
        if text.as_bytes()[open] == b'}' {
            template.problem(ProblemKind::UnmatchedClose, open..open + 1);
            template.after_query(&mut query, rest..open + 1);
            return template;
        }
        let Some(close) = text[open..].find('}').map(|i| open + i) else {
            template.problem(ProblemKind::Unclosed, open..text.len());
            template.after_query(&mut query, rest..text.len());
            return template;
        };
        let range = open..close + 1;
        rest = close + 1;
        template.after_query(&mut query, range.clone());
        let (operator, list) = Operator::split(&text[open + 1..close]);
        let names: Vec<&str> = list.split(',').collect();
        template.expression(&range, operator, &names, &mut previous_path_end);
        if operator == Operator::Query {
            query = Some(range.clone());
        }
        template.pieces.push(Piece::Expression(Expression {
            operator,
            names,
            range,
        }));
    }
}

impl<'a> Template<'a> {
    fn literal(&mut self, text: &'a str, range: Range<usize>) {
        if !range.is_empty() {
            self.pieces.push(Piece::Literal {
                text: &text[range.clone()],
                range,
            });
        }
    }

    fn problem(&mut self, kind: ProblemKind<'a>, range: Range<usize>) {
        self.problems.push(Problem { kind, range });
    }

    /// Reports the query expression read last, if there is one, as followed by `range`,
    /// unless that is empty.
    fn after_query(&mut self, query: &mut Option<Range<usize>>, range: Range<usize>) {
        if !range.is_empty()
            && let Some(query) = query.take()
        {
            self.problem(ProblemKind::QueryNotLast { query }, range);
        }
    }

    /// Checks one expression against the rules, and records its variables.
    fn expression(
        &mut self,
        range: &Range<usize>,
        operator: Operator,
        names: &[&'a str],
        previous_path_end: &mut Option<usize>,
    ) {
        if range.len() == 2 {
            self.problem(ProblemKind::EmptyExpression, range.clone());
            return;
        }
        if let Operator::Unsupported(c) = operator {
            self.problem(ProblemKind::UnsupportedOperator(c), range.clone());
            return;
        }
        for &name in names {
            let kind = if name.is_empty() {
                ProblemKind::MissingName
            } else if !is_variable_name(name) {
                ProblemKind::InvalidName(name)
            } else if self.variables.iter().any(|v| v.name == name) {
                ProblemKind::DuplicateName(name)
            } else {
                self.variables.push(Variable {
                    name,
                    operator,
                    range: range.clone(),
                });
                continue;
            };
            self.problem(kind, range.clone());
        }
        if names.len() > 1 && operator != Operator::Query {
            self.problem(ProblemKind::SeveralNamesOutsideQuery, range.clone());
        }
        if operator.is_path() {
            if *previous_path_end == Some(range.start) {
                self.problem(ProblemKind::AdjacentVariables, range.clone());
            }
            *previous_path_end = Some(range.end);
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<ProblemKind<'_>> {
        parse(text).problems.into_iter().map(|p| p.kind).collect()
    }

    #[test]
    fn a_template_without_expressions_is_one_literal() {
        let template = parse("file:///notes.txt");
        assert!(template.is_well_formed());
        assert!(template.variables.is_empty());
        assert_eq!(
            template.pieces,
            [Piece::Literal {
                text: "file:///notes.txt",
                range: 0..17
            }]
        );
        assert_eq!(parse("").pieces, []);
    }

    #[test]
    fn pieces_alternate_literals_and_expressions() {
        let template = parse("repo://{+path}/blame{?rev}");
        assert!(template.is_well_formed());
        assert_eq!(
            template.pieces,
            [
                Piece::Literal {
                    text: "repo://",
                    range: 0..7
                },
                Piece::Expression(Expression {
                    operator: Operator::Reserved,
                    names: vec!["path"],
                    range: 7..14
                }),
                Piece::Literal {
                    text: "/blame",
                    range: 14..20
                },
                Piece::Expression(Expression {
                    operator: Operator::Query,
                    names: vec!["rev"],
                    range: 20..26
                }),
            ]
        );
    }

    #[test]
    fn unmatched_braces_end_the_reading() {
        let template = parse("a}b{c}");
        assert_eq!(
            template.problems,
            [Problem {
                kind: ProblemKind::UnmatchedClose,
                range: 1..2
            }]
        );
        assert_eq!(template.pieces.len(), 1, "only the literal before it");
        let template = parse("a/{b}/{c");
        assert_eq!(
            template.problems,
            [Problem {
                kind: ProblemKind::Unclosed,
                range: 6..8
            }]
        );
        assert_eq!(template.variables.len(), 1, "`b` was read");
    }

    #[test]
    fn only_plus_and_question_mark_are_operators_in_use() {
        for c in "#./;&=,!@|".chars() {
            assert_eq!(
                kinds(&format!("x{{{c}a}}")),
                [ProblemKind::UnsupportedOperator(c)]
            );
        }
        // Not an operator of RFC 6570: the start of a name that is not valid.
        assert_eq!(kinds("{-a}"), [ProblemKind::InvalidName("-a")]);
        assert_eq!(kinds("{é}"), [ProblemKind::InvalidName("é")]);
    }

    #[test]
    fn names_are_ascii_letters_digits_and_underscores() {
        assert!(is_variable_name("a_1"));
        assert!(is_variable_name("2fa"), "a digit may start a name");
        assert!(!is_variable_name("a-b"));
        assert!(!is_variable_name("a b"));
        assert_eq!(kinds("{a-b}"), [ProblemKind::InvalidName("a-b")]);
        assert_eq!(kinds("{}"), [ProblemKind::EmptyExpression]);
        assert_eq!(kinds("{?}"), [ProblemKind::MissingName]);
        assert_eq!(kinds("{+}"), [ProblemKind::MissingName]);
    }

    #[test]
    fn only_a_query_lists_several_names() {
        assert!(parse("s://x{?a,b,c}").is_well_formed());
        assert_eq!(
            kinds("{a,}"),
            [
                ProblemKind::MissingName,
                ProblemKind::SeveralNamesOutsideQuery
            ]
        );
        assert_eq!(kinds("{+a,b}"), [ProblemKind::SeveralNamesOutsideQuery]);
    }

    #[test]
    fn a_query_ends_the_template() {
        fn after_query(text: &str) -> Vec<Problem<'_>> {
            parse(text).problems
        }
        let not_last = |query: Range<usize>, range: Range<usize>| Problem {
            kind: ProblemKind::QueryNotLast { query },
            range,
        };
        assert_eq!(after_query("{?q}/x"), [not_last(0..4, 4..6)]);
        // What follows is the next expression, when there is one.
        assert_eq!(after_query("{?q}x{y}"), [not_last(0..4, 5..8)]);
        assert_eq!(after_query("{?a}{?b}"), [not_last(0..4, 4..8)]);
        // A brace without a match is the first problem; the query still has text after it.
        assert_eq!(
            kinds("{?q}/{x"),
            [
                ProblemKind::Unclosed,
                ProblemKind::QueryNotLast { query: 0..4 }
            ]
        );
        // The query's own problems come before what follows it.
        assert_eq!(
            kinds("{?a-b}{c}"),
            [
                ProblemKind::InvalidName("a-b"),
                ProblemKind::QueryNotLast { query: 0..6 }
            ]
        );
        assert!(
            parse("{a}{?q}").is_well_formed(),
            "a query may follow a variable"
        );
    }

    #[test]
    fn path_variables_are_separated_by_literal_text() {
        let template = parse("{a}{+b}");
        assert_eq!(
            template.problems,
            [Problem {
                kind: ProblemKind::AdjacentVariables,
                range: 3..7
            }]
        );
        assert!(parse("{a}-{+b}").is_well_formed());
        // An expression refused for its operator does not count as a variable before the next.
        assert_eq!(
            kinds("{#a}{b}{c}"),
            [
                ProblemKind::UnsupportedOperator('#'),
                ProblemKind::AdjacentVariables
            ]
        );
    }

    #[test]
    fn a_name_appears_once() {
        let template = parse("{x}/{x}");
        assert_eq!(
            template.problems,
            [Problem {
                kind: ProblemKind::DuplicateName("x"),
                range: 4..7
            }]
        );
        assert_eq!(template.variables.len(), 1);
        assert_eq!(kinds("{a}/{?a}"), [ProblemKind::DuplicateName("a")]);
        // A name refused for its characters is not a variable that can be repeated.
        assert_eq!(
            kinds("{a-b}/{a-b}"),
            [
                ProblemKind::InvalidName("a-b"),
                ProblemKind::InvalidName("a-b")
            ]
        );
    }

    #[test]
    fn every_problem_is_found_in_the_order_of_the_text() {
        let template = parse("db://{table}/{#col}/{a,b-c}/{row");
        let found: Vec<(ProblemKind<'_>, Range<usize>)> = template
            .problems
            .into_iter()
            .map(|p| (p.kind, p.range))
            .collect();
        assert_eq!(
            found,
            [
                (ProblemKind::UnsupportedOperator('#'), 13..19),
                (ProblemKind::InvalidName("b-c"), 20..27),
                (ProblemKind::SeveralNamesOutsideQuery, 20..27),
                (ProblemKind::Unclosed, 28..32),
            ]
        );
        assert_eq!(
            template
                .variables
                .iter()
                .map(|v| v.name)
                .collect::<Vec<_>>(),
            ["table", "a"]
        );
    }

    #[test]
    fn wide_characters_in_literals_and_names_are_read_whole() {
        let template = parse("f://맧/{a}맧");
        assert!(template.is_well_formed());
        assert_eq!(template.variables[0].range, 8..11);
        assert_eq!(kinds("{맧}"), [ProblemKind::InvalidName("맧")]);
    }
}
