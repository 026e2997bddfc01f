//! URI templates (RFC 6570) for resource templates: parsing (with the grammar of
//! `mcp_grammar::uri_template`, which `#[resource]` checks at compile time), and matching a
//! concrete URI back to the template's variables.
//!
//! Supported: level 1 (`{var}`), reserved expansion (`{+var}`) and form-style query expansion
//! (`{?a,b}`). Matching is the inverse of expansion, with one safety rule: a simple `{var}`
//! stands for exactly one path segment, so a value that would escape it — one containing `/`
//! (also percent-encoded as `%2F`), `?`, `#`, or equal to `.` or `..` — never matches.

use mcp_grammar::uri_template::{self as grammar, Operator, Piece, Problem, ProblemKind};
use std::borrow::Cow;
use std::fmt;

/// A parsed URI template.
///
/// ```
/// use mcp_runtime::UriTemplate;
///
/// let t = UriTemplate::parse("postgres://tables/{table}/ddl").unwrap();
/// let vars = t.matches("postgres://tables/users/ddl").unwrap();
/// assert_eq!(vars.get("table"), Some("users"));
/// assert!(t.matches("postgres://tables/../ddl").is_none());
/// assert!(t.matches("postgres://tables/a%2Fb/ddl").is_none());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UriTemplate {
    text: String,
    parts: Vec<Part>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Literal(String),
    /// `{var}`: one segment, percent-decoded.
    Simple(String),
    /// `{+var}`: any run of characters but `?` and `#`, percent-decoded.
    Reserved(String),
    /// `{?a,b}`: an optional query string of these names, at the end.
    Query(Vec<String>),
}

/// Why a template string is not a supported URI template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UriTemplateError {
    /// What is wrong.
    pub message: String,
    /// The byte offset in the template where the problem is.
    pub offset: usize,
}

impl fmt::Display for UriTemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at byte {})", self.message, self.offset)
    }
}

impl std::error::Error for UriTemplateError {}

impl UriTemplateError {
    fn from_problem(problem: &Problem<'_>) -> UriTemplateError {
        let start = problem.range.start;
        let invalid_name =
            |name: &str| format!("`{name}` is not a valid variable name (letters, digits and `_`)");
        // Problems inside an expression are placed after its `{`.
        let (message, offset) = match &problem.kind {
            ProblemKind::UnmatchedClose => ("`}` without a matching `{`".to_owned(), start),
            ProblemKind::Unclosed => ("`{` without a matching `}`".to_owned(), start),
            ProblemKind::EmptyExpression | ProblemKind::MissingName => {
                (invalid_name(""), start + 1)
            }
            ProblemKind::InvalidName(name) => (invalid_name(name), start + 1),
            ProblemKind::UnsupportedOperator(c) => (
                format!(
                    "the operator `{c}` is not supported; use `{{var}}`, `{{+var}}` or `{{?a,b}}`"
                ),
                start + 1,
            ),
            ProblemKind::SeveralNamesOutsideQuery => (
                "only a query expression `{?a,b}` may list several variables".to_owned(),
                start + 1,
            ),
            ProblemKind::AdjacentVariables => (
                "two variables must be separated by literal text".to_owned(),
                start,
            ),
            // At what follows the query.
            ProblemKind::QueryNotLast { .. } => (
                "a query expression `{?…}` must end the template".to_owned(),
                start,
            ),
            // The template as a whole.
            ProblemKind::DuplicateName(name) => (format!("variable `{name}` appears twice"), 0),
        };
        UriTemplateError { message, offset }
    }
}

/// The variables bound by a successful match, in template order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UriVariables {
    values: Vec<(String, String)>,
}

impl UriVariables {
    /// The value of a variable, if it was bound (query variables may be absent).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every bound variable, in template order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }
}

impl UriTemplate {
    /// Parses a template (the grammar is `mcp_grammar::uri_template`'s, which `#[resource]`
    /// checks too); the error is the template's first problem.
    pub fn parse(text: &str) -> Result<UriTemplate, UriTemplateError> {
        let read = grammar::parse(text);
        // A malformed piece is reported before a repeated name, and of the repeated names the
        // first in alphabetical order.
        let first = read.problems.iter().min_by_key(|p| match p.kind {
            ProblemKind::DuplicateName(name) => (true, name),
            _ => (false, ""),
        });
        if let Some(problem) = first {
            return Err(UriTemplateError::from_problem(problem));
        }
        let parts = read
            .pieces
            .into_iter()
            .map(|piece| match piece {
                Piece::Literal { text, .. } => Part::Literal(text.to_owned()),
                Piece::Expression(e) => {
                    let mut names = e.names.into_iter().map(str::to_owned);
                    match e.operator {
                        Operator::Query => Part::Query(names.collect()),
                        Operator::Reserved => Part::Reserved(names.next().unwrap_or_default()),
                        // A well-formed template has no other operator.
                        Operator::Simple | Operator::Unsupported(_) => {
                            Part::Simple(names.next().unwrap_or_default())
                        }
                    }
                }
            })
            .collect();
        Ok(UriTemplate {
            text: text.to_owned(),
            parts,
        })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the template has no variables (a static URI).
    pub fn is_static(&self) -> bool {
        self.parts.iter().all(|p| matches!(p, Part::Literal(_)))
    }

    /// The names of the variables, in template order.
    pub fn variable_names(&self) -> impl Iterator<Item = &str> {
        self.parts
            .iter()
            .flat_map(|p| -> Box<dyn Iterator<Item = &str>> {
                match p {
                    Part::Literal(_) => Box::new(std::iter::empty()),
                    Part::Simple(n) | Part::Reserved(n) => Box::new(std::iter::once(n.as_str())),
                    Part::Query(names) => Box::new(names.iter().map(String::as_str)),
                }
            })
    }

    /// The length of the literal text before the first variable: templates with a longer
    /// literal prefix are more specific and are tried first.
    pub(crate) fn literal_prefix_len(&self) -> usize {
        match self.parts.first() {
            Some(Part::Literal(l)) => l.len(),
            _ => 0,
        }
    }

    /// Matches a concrete URI, binding the variables; `None` when it does not match.
    ///
    /// A variable binds the shortest value for which the rest of the template matches. The
    /// work is linear in the URI's length for each part of the template; a URI longer than
    /// [`UriTemplate::MAX_MATCHED_URI`] bytes matches only a template without variables.
    pub fn matches(&self, uri: &str) -> Option<UriVariables> {
        if self.is_static() {
            return (self.text == uri).then(UriVariables::default);
        }
        if uri.len() > Self::MAX_MATCHED_URI {
            return None;
        }
        // Most templates a URI is tried against differ from it in their first literal.
        if let Some(Part::Literal(first)) = self.parts.first()
            && !uri.starts_with(first.as_str())
        {
            return None;
        }
        if let Some(Part::Literal(last)) = self.parts.last()
            && !uri.ends_with(last.as_str())
        {
            return None;
        }
        let mut matcher = Matcher::new(&self.parts, uri);
        matcher.from(0, 0).then_some(UriVariables {
            values: matcher.values,
        })
    }

    /// The longest URI matched against a template with variables (64 KiB): matching keeps
    /// a few bytes per URI byte and template part, and no resource URI comes near it.
    pub const MAX_MATCHED_URI: usize = 64 * 1024;
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// One match of a URI against a template's parts.
///
/// First, from the last part back, which positions of the URI each part (with the parts
/// after it) can match from, as far as the URI's text tells; then one walk from the start
/// that binds the values, trying for each variable only the ends from which the rest is
/// known to match. Decoding can still refuse a value (an escape that is not UTF-8, or `.`
/// for a simple variable), and the walk then tries the next end. A budget of steps bounds
/// what no ordinary URI needs: query strings read from many places, and many refused values.
struct Matcher<'t, 'u> {
    parts: &'t [Part],
    uri: &'u str,
    values: Vec<(String, String)>,
    /// `reach[k][p]`: the parts from `k` on can match the URI from byte `p` on.
    reach: Vec<Vec<bool>>,
    /// For a variable part `k` followed by a literal: `next_end[k][i]` is the least end
    /// `e ≥ i` of a value where the rest matches and no escape is split (`uri[e - 1]` and
    /// `uri[e - 2]` are not `%`), or `usize::MAX`.
    next_end: Vec<Vec<usize>>,
    /// `stop[SIMPLE][p]`, `stop[RESERVED][p]`: the next byte at or after `p` that ends a value.
    stop: [Vec<usize>; 2],
    /// `bad[…][p]`: how far a value starting at `p` may run: to the next escape it cannot
    /// hold, or to where its decoded bytes stop being UTF-8.
    bad: [Vec<usize>; 2],
    /// `lead[e]`: where the multi-byte character starts whose escapes `e` is inside (the
    /// escape at `e` is one of its continuation bytes), or `usize::MAX`.
    lead: Vec<usize>,
    /// Pairs (part, position) the walk found to bind nothing.
    failed: std::collections::HashSet<(usize, usize)>,
    /// Steps left; none left means no match.
    budget: usize,
}

const SIMPLE: usize = 0;
const RESERVED: usize = 1;

impl<'t, 'u> Matcher<'t, 'u> {
    fn new(parts: &'t [Part], uri: &'u str) -> Self {
        let n = uri.len();
        let bytes = uri.as_bytes();
        let stop = [
            next_where(n, |i| matches!(bytes[i], b'?' | b'#' | b'/')),
            next_where(n, |i| matches!(bytes[i], b'?' | b'#')),
        ];
        let (error, lead) = decoding(bytes);
        let bad = [true, false].map(|simple| {
            let mut bad = bad_escapes(bytes, simple);
            for (b, e) in bad.iter_mut().zip(&error) {
                *b = (*b).min(*e);
            }
            bad
        });
        let budget = 8 * n + 100_000;
        let literal_questions: usize = parts
            .iter()
            .map(|part| match part {
                Part::Literal(l) => l.matches('?').count(),
                _ => 0,
            })
            .sum();
        let mut reach = vec![Vec::new(); parts.len() + 1];
        let mut next_end = vec![Vec::new(); parts.len()];
        reach[parts.len()] = (0..=n).map(|p| p == n).collect();
        for k in (0..parts.len()).rev() {
            let after = &reach[k + 1];
            let row: Vec<bool> = match &parts[k] {
                Part::Literal(l) => (0..=n)
                    .map(|p| bytes[p..].starts_with(l.as_bytes()) && after[p + l.len()])
                    .collect(),
                // No value holds a raw `?`, so the query starts at the first `?` after those
                // of the template's literals, or is empty at the end.
                Part::Query(names) => {
                    let mut row = vec![false; n + 1];
                    let start = uri
                        .match_indices('?')
                        .map(|(i, _)| i)
                        .nth(literal_questions)
                        .unwrap_or(n);
                    row[start] = match_query(names, &uri[start..], &mut Vec::new());
                    row
                }
                Part::Simple(_) | Part::Reserved(_) => {
                    let which = variable_kind(&parts[k]);
                    let (stop, bad) = (&stop[which], &bad[which]);
                    if matches!(parts.get(k + 1), Some(Part::Literal(_))) {
                        let mut ends = vec![usize::MAX; n + 2];
                        for e in (1..=n).rev() {
                            let whole = bytes[e - 1] != b'%'
                                && (e < 2 || bytes[e - 2] != b'%')
                                && lead[e] == usize::MAX;
                            ends[e] = if after[e] && whole { e } else { ends[e + 1] };
                        }
                        let row = (0..=n)
                            .map(|p| {
                                let limit = stop[p].min(bad[p]);
                                let candidates = Ends {
                                    next_end: &ends,
                                    after,
                                    uri,
                                    lead: &lead,
                                    simple: which == SIMPLE,
                                };
                                candidates.from(p, limit, p + 1).is_some()
                            })
                            .collect();
                        next_end[k] = ends;
                        row
                    } else {
                        // The value runs to the end of the URI, or to where its query starts.
                        (0..=n)
                            .map(|p| {
                                let e = stop[p];
                                e > p
                                    && e <= bad[p]
                                    && (e == n || bytes[e] == b'?')
                                    && bytes[e - 1] != b'%'
                                    && (e < p + 2 || bytes[e - 2] != b'%')
                                    && after[e]
                                    && !(which == SIMPLE && is_dot(&bytes[p..e]))
                            })
                            .collect()
                    }
                }
            };
            reach[k] = row;
        }
        Matcher {
            parts,
            uri,
            values: Vec::new(),
            reach,
            next_end,
            stop,
            bad,
            lead,
            failed: std::collections::HashSet::new(),
            budget,
        }
    }

    /// The ends a value of variable `k` may have, a literal following it.
    fn ends(&self, k: usize) -> Ends<'_> {
        Ends {
            next_end: &self.next_end[k],
            after: &self.reach[k + 1],
            uri: self.uri,
            lead: &self.lead,
            simple: matches!(self.parts[k], Part::Simple(_)),
        }
    }

    /// Binds the parts from `k` on to the URI from byte `pos` on.
    fn from(&mut self, k: usize, pos: usize) -> bool {
        if !self.reach[k][pos] || self.failed.contains(&(k, pos)) {
            return false;
        }
        let Some(part) = self.parts.get(k) else {
            return true; // past the last part, at the end of the URI
        };
        let found = match part {
            Part::Literal(l) => self.from(k + 1, pos + l.len()),
            Part::Query(names) => match_query(names, &self.uri[pos..], &mut self.values),
            Part::Simple(name) | Part::Reserved(name) => self.variable(k, pos, name),
        };
        if !found {
            self.failed.insert((k, pos));
        }
        found
    }

    /// Binds the variable of part `k` to a value starting at `pos`: the shortest for which
    /// the parts after it match and which decodes.
    fn variable(&mut self, k: usize, pos: usize, name: &str) -> bool {
        let which = variable_kind(&self.parts[k]);
        let simple = which == SIMPLE;
        let limit = self.stop[which][pos].min(self.bad[which][pos]);
        let literal_next = matches!(self.parts.get(k + 1), Some(Part::Literal(_)));
        let mut end = if literal_next {
            self.ends(k).from(pos, limit, pos + 1)
        } else {
            Some(self.stop[which][pos])
        };
        while let Some(e) = end {
            let mark = self.values.len();
            // Decoded once the rest is known to fit, and put before what the later parts
            // bound.
            if self.from(k + 1, e)
                && spend(&mut self.budget, e - pos + 1)
                && let Some(value) = percent_decode(&self.uri[pos..e])
                && !(simple && (value == "." || value == ".."))
            {
                self.values.insert(mark, (name.to_owned(), value));
                return true;
            }
            self.values.truncate(mark);
            if self.budget == 0 || !literal_next {
                return false;
            }
            end = self.ends(k).from(pos, limit, e + 1);
        }
        false
    }
}

/// Which of [`SIMPLE`] and [`RESERVED`] a variable part is.
fn variable_kind(part: &Part) -> usize {
    match part {
        Part::Simple(_) => SIMPLE,
        _ => RESERVED,
    }
}

/// The ends a value may have when a literal follows it.
struct Ends<'a> {
    /// The matcher's `next_end` row of the variable.
    next_end: &'a [usize],
    /// Where the parts after the variable can match from.
    after: &'a [bool],
    uri: &'a str,
    lead: &'a [usize],
    /// A simple variable, which never holds `.` or `..`.
    simple: bool,
}

impl Ends<'_> {
    /// The shortest end at or after `from` that a value starting at `p` may have, up to
    /// `limit`. The first two are looked at apart: the byte before the value does not count
    /// in whether it splits an escape, and a character whose escapes began before the value
    /// does not bind it.
    fn from(&self, p: usize, limit: usize, mut from: usize) -> Option<usize> {
        let bytes = self.uri.as_bytes();
        loop {
            let mut found = None;
            for e in from..p + 3 {
                if e > limit {
                    return None;
                }
                let whole = bytes[e - 1] != b'%' && (e < p + 2 || bytes[e - 2] != b'%');
                let lead = self.lead[e];
                if self.after[e] && whole && (lead == usize::MAX || lead < p) {
                    found = Some(e);
                    break;
                }
            }
            let e = match found {
                Some(e) => e,
                None => self
                    .next_end
                    .get(from.max(p + 3))
                    .copied()
                    .filter(|&e| e <= limit)?,
            };
            if !(self.simple && is_dot(&bytes[p..e])) {
                return Some(e);
            }
            from = e + 1;
        }
    }
}

/// Whether a raw value decodes to `.` or `..` (each dot raw or `%2E`), which a simple
/// variable never holds.
fn is_dot(raw: &[u8]) -> bool {
    let (mut dots, mut i) = (0, 0);
    while i < raw.len() {
        if raw[i] == b'.' {
            i += 1;
        } else if raw[i..].len() >= 3 && raw[i..i + 2] == *b"%2" && raw[i + 2] | 0x20 == b'e' {
            i += 3;
        } else {
            return false;
        }
        dots += 1;
    }
    (1..=2).contains(&dots)
}

/// How percent-decoding goes from each position: where decoding a value that starts there
/// first fails (an escape that is no UTF-8 where it stands, or a bad escape), or
/// `usize::MAX`; and, for each escape that continues a multi-byte character, where that
/// character starts.
fn decoding(bytes: &[u8]) -> (Vec<usize>, Vec<usize>) {
    let n = bytes.len();
    let escape = |i: usize| -> Option<u8> {
        let hex = bytes.get(i + 1..i + 3).filter(|_| bytes[i] == b'%')?;
        let digit = |h: u8| (h as char).to_digit(16);
        u8::try_from(digit(hex[0])? * 16 + digit(hex[1])?).ok()
    };
    // The length in escapes of the character whose first byte is escaped at `i`, when the
    // escapes that follow complete it as UTF-8.
    let character = |i: usize, first: u8| -> Option<usize> {
        let len = match first {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => return None,
        };
        let mut buf = [0u8; 4];
        for (j, b) in buf.iter_mut().enumerate().take(len) {
            *b = escape(i + 3 * j)?;
        }
        std::str::from_utf8(&buf[..len]).ok().map(|_| len)
    };
    let mut error = vec![usize::MAX; n + 1];
    let mut lead = vec![usize::MAX; n + 1];
    for i in (0..n).rev() {
        error[i] = match escape(i) {
            None if bytes[i] == b'%' => i,
            None => error[i + 1],
            Some(b) if b < 0x80 => error[i + 3],
            Some(b) => match character(i, b) {
                Some(len) => {
                    for j in 1..len {
                        lead[i + 3 * j] = i;
                    }
                    error[i + 3 * len]
                }
                None => i,
            },
        };
    }
    (error, lead)
}

/// Takes `steps` from a budget; false, and nothing left, when it does not have them.
fn spend(budget: &mut usize, steps: usize) -> bool {
    match budget.checked_sub(steps) {
        Some(left) => {
            *budget = left;
            true
        }
        None => {
            *budget = 0;
            false
        }
    }
}

/// For each position `0..=n`, the next position at or after it where `is` holds, or `n`.
fn next_where(n: usize, is: impl Fn(usize) -> bool) -> Vec<usize> {
    let mut next = vec![n; n + 1];
    for i in (0..n).rev() {
        next[i] = if is(i) { i } else { next[i + 1] };
    }
    next
}

/// For each position, where the next `%` is that does not start `%` and two hex digits (or,
/// for a simple variable, that stands for `/`): a value must end before it. A valid escape's
/// digits are never `%`, so this does not depend on where the value starts.
fn bad_escapes(bytes: &[u8], simple: bool) -> Vec<usize> {
    next_where(bytes.len(), |i| {
        bytes[i] == b'%'
            && bytes.get(i + 1..i + 3).is_none_or(|hex| {
                !hex.iter().all(u8::is_ascii_hexdigit)
                    || (simple && hex.eq_ignore_ascii_case(b"2f"))
            })
    })
}

fn match_query(names: &[String], uri: &str, values: &mut Vec<(String, String)>) -> bool {
    if uri.is_empty() {
        return true;
    }
    let Some(query) = uri.strip_prefix('?') else {
        return false;
    };
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let Some(name) = names.iter().find(|n| n.as_str() == key) else {
            return false;
        };
        if values.iter().any(|(n, _)| n == name) {
            return false;
        }
        let Some(value) = percent_decode(&value.replace('+', "%20")) else {
            return false;
        };
        values.push((name.clone(), value));
    }
    true
}

/// Decodes `%XX` escapes; `None` for a malformed escape or bytes that are not UTF-8.
///
/// `percent-encoding` passes a `%` that starts no escape through as text; RFC 3986 (2.1) has
/// no such `%`, and a URI holding one is refused here (and binds no variable) rather than
/// read as something its sender may not have meant.
pub(crate) fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let well_formed = s.match_indices('%').all(|(i, _)| {
        bytes
            .get(i + 1..i + 3)
            .is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit))
    });
    if !well_formed {
        return None;
    }
    percent_encoding::percent_decode_str(s)
        .decode_utf8()
        .ok()
        .map(Cow::into_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(template: &str, uri: &str) -> Option<Vec<(String, String)>> {
        UriTemplate::parse(template)
            .unwrap()
            .matches(uri)
            .map(|v| v.values)
    }

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter().map(|(a, b)| ((*a).into(), (*b).into())).collect()
    }

    #[test]
    fn simple_variables_bind_one_segment_each() {
        assert_eq!(
            vars("db://{schema}/{table}/ddl", "db://public/users/ddl"),
            Some(pairs(&[("schema", "public"), ("table", "users")]))
        );
        assert_eq!(vars("db://{table}/ddl", "db://a/b/ddl"), None);
        assert_eq!(
            vars("db://{table}", "db://"),
            None,
            "a variable is never empty"
        );
    }

    #[test]
    fn values_that_escape_their_segment_never_match_a_simple_variable() {
        for uri in [
            "f://..",
            "f://.",
            "f://a%2Fb",
            "f://a%2fb",
            "f://%2E%2E/x",
            "f://a/b",
        ] {
            assert_eq!(vars("f://{name}", uri), None, "{uri}");
        }
        assert_eq!(vars("f://{name}", "f://%2E%2E"), None);
    }

    #[test]
    fn percent_escapes_are_decoded() {
        assert_eq!(
            vars("f://{name}", "f://a%20b"),
            Some(pairs(&[("name", "a b")]))
        );
        assert_eq!(vars("f://{name}", "f://%zz"), None);
        assert_eq!(
            vars("f://{name}", "f://%+1"),
            None,
            "a sign is no hex digit"
        );
        assert_eq!(vars("f://{name}", "f://%ff"), None, "not UTF-8");
    }

    #[test]
    fn reserved_variables_span_slashes() {
        assert_eq!(
            vars("file:///{+path}", "file:///etc/hosts"),
            Some(pairs(&[("path", "etc/hosts")]))
        );
        assert_eq!(
            vars("repo://{+path}/blame", "repo://src/lib.rs/blame"),
            Some(pairs(&[("path", "src/lib.rs")]))
        );
    }

    #[test]
    fn query_variables_are_optional_and_in_any_order() {
        let t = "search://items{?q,limit}";
        assert_eq!(vars(t, "search://items"), Some(vec![]));
        assert_eq!(
            vars(t, "search://items?limit=5&q=a+b"),
            Some(pairs(&[("limit", "5"), ("q", "a b")]))
        );
        assert_eq!(vars(t, "search://items?other=1"), None);
        assert_eq!(vars(t, "search://items?q=1&q=2"), None);
    }

    #[test]
    fn malformed_templates_are_refused() {
        for t in [
            "a{b", "a}b", "{}", "{a,b}", "{#x}", "{a}{b}", "{?q}/x", "{a-b}", "{x}/{x}",
        ] {
            assert!(UriTemplate::parse(t).is_err(), "{t}");
        }
        assert!(
            UriTemplate::parse("s{?q}x{y}").is_err(),
            "more after the query"
        );
    }

    #[test]
    fn many_variables_and_a_long_uri_end_in_bounded_work() {
        // Each `x` could end any of the variables: a search without memory of what failed
        // tries exponentially many splits.
        let template: String = (0..40).map(|i| format!("{{v{i}}}x")).collect();
        let t = UriTemplate::parse(&template).unwrap();
        let uri = "x".repeat(5_000) + "y";
        assert!(t.matches(&uri).is_none());
        let uri = "ax".repeat(40);
        let vars = t.matches(&uri).expect("one split fits");
        assert!(vars.iter().all(|(_, v)| v == "a"));
        // A long value of the one variable a resource template usually has.
        let files = UriTemplate::parse("test://files/{+path}").unwrap();
        let long = format!("test://files/{}", "a/".repeat(30_000));
        assert_eq!(
            files.matches(&long).unwrap().get("path").unwrap().len(),
            60_000
        );
        let too_long = format!("test://files/{}", "a/".repeat(40_000));
        assert!(files.matches(&too_long).is_none());
        // Many escapes that could each end a value, and a literal made of one.
        let t = UriTemplate::parse("f://{+a}%00{+b}%00{+c}").unwrap();
        let uri = format!("f://{}", "%00".repeat(20_000));
        let vars = t.matches(&uri).expect("the shortest values fit");
        assert_eq!((vars.get("a"), vars.get("b")), (Some("\0"), Some("\0")));
    }

    #[test]
    fn escapes_are_never_split_by_the_end_of_a_value() {
        assert_eq!(
            vars("f://{a}-{b}", "f://x%2D-y"),
            Some(pairs(&[("a", "x-"), ("b", "y")]))
        );
        assert_eq!(
            vars("f://{a}%{b}", "f://x%y"),
            Some(pairs(&[("a", "x"), ("b", "y")]))
        );
    }

    #[test]
    fn a_literal_after_a_variable_is_looked_for_in_text_with_wide_characters() {
        // The search for `xy` past the `/` that ends `{a}` used to cut `맧` in two.
        assert_eq!(vars("f://{a}xy", "f://ab/맧"), None);
        assert_eq!(
            vars("f://{a}맧/{b}", "f://a맧/b"),
            Some(pairs(&[("a", "a"), ("b", "b")]))
        );
        assert_eq!(
            vars("f://{a}xy", "f://맧맧xy"),
            Some(pairs(&[("a", "맧맧")]))
        );
    }

    #[test]
    fn values_that_would_not_decode_are_never_tried() {
        // `b` could start at any `%00` and run to `%dd0`, which is no UTF-8: a search that
        // decodes each candidate runs out of steps long before it finds the one split.
        let t = UriTemplate::parse("f://{+a}%{b}%{+c}").unwrap();
        let uri = format!("f://{}%dd0d%%25", "%00".repeat(3_000));
        let bound = t.matches(&uri).expect("the split the URI was made from");
        assert_eq!(bound.get("a").map(str::len), Some(3_000));
        assert_eq!((bound.get("b"), bound.get("c")), (Some("dd0d"), Some("%")));
        // A character's escapes begun in the literal before a value do not bind the value.
        assert_eq!(
            vars("f://x%{b}%A9", "f://x%C3%A9"),
            Some(pairs(&[("b", "C3")]))
        );
        // Escapes that are not UTF-8 never make a value.
        assert_eq!(vars("f://{a}/x", "f://%C3/x"), None);
        assert_eq!(
            vars("f://{a}/x", "f://%C3%A9/x"),
            Some(pairs(&[("a", "é")]))
        );
    }

    #[test]
    fn dot_segments_and_question_marks_cost_no_search() {
        // Every `/.` could end `a` if `.` were a value of `b`; it never is.
        let t = UriTemplate::parse("f://{+a}/{b}/{+c}").unwrap();
        let uri = format!("f://x{}/y/z", "/.".repeat(20_000));
        let bound = t.matches(&uri).expect("b binds y");
        assert_eq!((bound.get("b"), bound.get("c")), (Some("y"), Some("z")));
        assert_eq!(vars("f://{a}/{b}", "f://x/%2E%2e"), None);
        // A query may hold raw `?`s; it starts after those of the literals.
        let t = UriTemplate::parse("f://s?/{a}{?q}").unwrap();
        let uri = format!("f://s?/x?q={}", "?".repeat(30_000));
        let bound = t.matches(&uri).expect("a binds x");
        assert_eq!(bound.get("a"), Some("x"));
        assert_eq!(bound.get("q").map(str::len), Some(30_000));
    }

    #[test]
    fn a_malformed_template_is_refused_with_its_first_problem_and_where_it_is() {
        let error = |t: &str| {
            let e = UriTemplate::parse(t).unwrap_err();
            (e.message, e.offset)
        };
        let invalid =
            |name: &str| format!("`{name}` is not a valid variable name (letters, digits and `_`)");
        assert_eq!(error("a}b"), ("`}` without a matching `{`".into(), 1));
        assert_eq!(error("ab/{c"), ("`{` without a matching `}`".into(), 3));
        assert_eq!(error("x/{}"), (invalid(""), 3));
        assert_eq!(error("x/{?}"), (invalid(""), 3));
        assert_eq!(error("x/{a-b}"), (invalid("a-b"), 3));
        assert_eq!(error("x/{-a}"), (invalid("-a"), 3));
        assert_eq!(
            error("x/{#a}"),
            (
                "the operator `#` is not supported; use `{var}`, `{+var}` or `{?a,b}`".into(),
                3
            )
        );
        assert_eq!(
            error("x/{a,b}"),
            (
                "only a query expression `{?a,b}` may list several variables".into(),
                3
            )
        );
        assert_eq!(
            error("x/{a}{+b}"),
            ("two variables must be separated by literal text".into(), 5)
        );
        let query_not_last = "a query expression `{?…}` must end the template".to_owned();
        assert_eq!(error("x{?q}/y"), (query_not_last.clone(), 5));
        assert_eq!(error("x{?q}{?r}"), (query_not_last, 5));
        assert_eq!(error("{x}/{x}"), ("variable `x` appears twice".into(), 0));
        assert_eq!(
            error("{b}/{a}/{b}/{a}"),
            ("variable `a` appears twice".into(), 0)
        );
        assert_eq!(
            error("{b}/{b}/{c-d}"),
            (invalid("c-d"), 9),
            "a malformed name before a repeated one"
        );
        assert_eq!(
            error("x{?q}y{z}"),
            ("a query expression `{?…}` must end the template".into(), 6)
        );
    }

    #[test]
    fn percent_decoding_refuses_what_is_no_escape_and_what_is_not_utf_8() {
        assert_eq!(percent_decode("plain").as_deref(), Some("plain"));
        assert_eq!(percent_decode("a%20b").as_deref(), Some("a b"));
        assert_eq!(percent_decode("%C3%a9").as_deref(), Some("é"));
        assert_eq!(percent_decode("%2525").as_deref(), Some("%25"));
        for malformed in [
            "%", "a%", "%4", "%zz", "%+1", "%-1", "%4%41", "%%41", "%\u{e9}",
        ] {
            assert_eq!(percent_decode(malformed), None, "{malformed}");
        }
        assert_eq!(percent_decode("%C3"), None, "half a character");
        assert_eq!(percent_decode("%ff"), None);
        assert_eq!(vars("s://x{?q}", "s://x?q=%zz"), None);
        assert_eq!(
            vars("s://x{?q}", "s://x?q=a%2Bb+c"),
            Some(pairs(&[("q", "a+b c")]))
        );
    }

    #[test]
    fn static_templates_match_exactly() {
        let t = UriTemplate::parse("test://static").unwrap();
        assert!(t.is_static());
        assert!(t.matches("test://static").is_some());
        assert!(t.matches("test://static/x").is_none());
    }
}
