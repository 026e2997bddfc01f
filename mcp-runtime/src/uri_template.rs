//! URI templates (RFC 6570) for resource templates: parsing, and matching a concrete URI back
//! to the template's variables.
//!
//! Supported: level 1 (`{var}`), reserved expansion (`{+var}`) and form-style query expansion
//! (`{?a,b}`). Matching is the inverse of expansion, with one safety rule: a simple `{var}`
//! stands for exactly one path segment, so a value that would escape it — one containing `/`
//! (also percent-encoded as `%2F`), `?`, `#`, or equal to `.` or `..` — never matches.

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
    /// Parses a template.
    pub fn parse(text: &str) -> Result<UriTemplate, UriTemplateError> {
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        let mut offset = 0;
        while let Some(open) = rest.find(['{', '}']) {
            if rest.as_bytes()[open] == b'}' {
                return Err(UriTemplateError {
                    message: "`}` without a matching `{`".into(),
                    offset: offset + open,
                });
            }
            literal.push_str(&rest[..open]);
            let close = rest[open..].find('}').ok_or_else(|| UriTemplateError {
                message: "`{` without a matching `}`".into(),
                offset: offset + open,
            })? + open;
            let expression = &rest[open + 1..close];
            // Checked before the literal is pushed: `{?q}x{y}` has a literal after the query.
            if matches!(parts.last(), Some(Part::Query(_))) {
                return Err(UriTemplateError {
                    message: "a query expression `{?…}` must end the template".into(),
                    offset: offset + open,
                });
            }
            if !literal.is_empty() {
                parts.push(Part::Literal(std::mem::take(&mut literal)));
            }
            let part = parse_expression(expression, offset + open + 1)?;
            if matches!(
                (&part, parts.last()),
                (
                    Part::Simple(_) | Part::Reserved(_),
                    Some(Part::Simple(_) | Part::Reserved(_))
                )
            ) {
                return Err(UriTemplateError {
                    message: "two variables must be separated by literal text".into(),
                    offset: offset + open,
                });
            }
            parts.push(part);
            offset += close + 1;
            rest = &rest[close + 1..];
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            if matches!(parts.last(), Some(Part::Query(_))) {
                return Err(UriTemplateError {
                    message: "a query expression `{?…}` must end the template".into(),
                    offset,
                });
            }
            parts.push(Part::Literal(literal));
        }
        let template = UriTemplate {
            text: text.to_owned(),
            parts,
        };
        let mut names: Vec<&str> = template.variable_names().collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(UriTemplateError {
                message: format!("variable `{}` appears twice", w[0]),
                offset: 0,
            });
        }
        Ok(template)
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
    /// The work is linear in the URI's length for the templates resources use (each
    /// variable followed by a literal, a query or the end), and bounded for any template
    /// and any URI: a URI that would take longer to match is taken not to match.
    pub fn matches(&self, uri: &str) -> Option<UriVariables> {
        let mut matcher = Matcher {
            parts: &self.parts,
            uri,
            values: Vec::new(),
            failed: std::collections::HashSet::new(),
            budget: 8 * uri.len() + 100_000,
        };
        matcher.from(0, 0).then_some(UriVariables {
            values: matcher.values,
        })
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn parse_expression(expression: &str, offset: usize) -> Result<Part, UriTemplateError> {
    let (operator, names) = match expression.chars().next() {
        Some(c @ ('+' | '?')) => (Some(c), &expression[1..]),
        Some(c @ ('#' | '.' | '/' | ';' | '&' | '=' | ',' | '!' | '@' | '|')) => {
            return Err(UriTemplateError {
                message: format!(
                    "the operator `{c}` is not supported; use `{{var}}`, `{{+var}}` or `{{?a,b}}`"
                ),
                offset,
            });
        }
        _ => (None, expression),
    };
    let names: Vec<String> = names.split(',').map(str::to_owned).collect();
    for name in &names {
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(UriTemplateError {
                message: format!("`{name}` is not a valid variable name (letters, digits and `_`)"),
                offset,
            });
        }
    }
    match operator {
        Some('?') => Ok(Part::Query(names)),
        _ if names.len() > 1 => Err(UriTemplateError {
            message: "only a query expression `{?a,b}` may list several variables".into(),
            offset,
        }),
        Some('+') => Ok(Part::Reserved(names.into_iter().next().unwrap_or_default())),
        _ => Ok(Part::Simple(names.into_iter().next().unwrap_or_default())),
    }
}

/// One match of a URI against a template's parts: a search over where each variable ends,
/// remembering the (part, position) pairs that cannot match, and with a budget of steps.
struct Matcher<'t, 'u> {
    parts: &'t [Part],
    uri: &'u str,
    values: Vec<(String, String)>,
    /// Parts that were tried at a position and cannot match from there.
    failed: std::collections::HashSet<(usize, usize)>,
    /// Bytes that may still be looked at; none left means no match.
    budget: usize,
}

impl Matcher<'_, '_> {
    fn spend(&mut self, steps: usize) -> bool {
        match self.budget.checked_sub(steps) {
            Some(left) => {
                self.budget = left;
                true
            }
            None => {
                self.budget = 0;
                false
            }
        }
    }

    /// Whether the parts from `k` on match the URI from byte `pos` on.
    fn from(&mut self, k: usize, pos: usize) -> bool {
        let uri = self.uri;
        let rest = &uri[pos..];
        let Some(part) = self.parts.get(k) else {
            return rest.is_empty();
        };
        match part {
            Part::Literal(l) => {
                self.spend(l.len())
                    && rest.starts_with(l.as_str())
                    && self.from(k + 1, pos + l.len())
            }
            Part::Query(names) => {
                self.spend(rest.len()) && match_query(names, rest, &mut self.values)
            }
            Part::Simple(name) | Part::Reserved(name) => {
                if self.failed.contains(&(k, pos)) {
                    return false;
                }
                let found = self.variable(k, pos, name);
                if !found {
                    self.failed.insert((k, pos));
                }
                found
            }
        }
    }

    /// Binds the variable of part `k` to a value starting at `pos`: the shortest for which
    /// the parts after it match.
    fn variable(&mut self, k: usize, pos: usize, name: &str) -> bool {
        let uri = self.uri;
        let rest = &uri[pos..];
        let simple = matches!(self.parts[k], Part::Simple(_));
        let stop = |c: char| c == '?' || c == '#' || (simple && c == '/');
        let limit = rest.find(stop).unwrap_or(rest.len());
        if !self.spend(limit) {
            return false;
        }
        // Where the value may end: before the next literal, where a query starts, or at the
        // end of the URI. Two variables are never adjacent (the parser refuses it).
        let next = self.parts.get(k + 1).cloned();
        let ends: Vec<usize> = match &next {
            None => (limit == rest.len()).then_some(limit).into_iter().collect(),
            Some(Part::Query(_)) => (limit == rest.len() || rest[limit..].starts_with('?'))
                .then_some(limit)
                .into_iter()
                .collect(),
            Some(Part::Literal(l)) => {
                // Searched as bytes: the window may end inside a character, and a literal
                // found in UTF-8 text always starts on a character boundary.
                let bytes = rest.as_bytes();
                let window = &bytes[..(limit + l.len()).min(bytes.len())];
                let literal = l.as_bytes();
                let mut ends = Vec::new();
                let mut from = 1;
                while from <= limit {
                    let Some(i) = window.get(from..).and_then(|w| find(w, literal)) else {
                        break;
                    };
                    let end = from + i;
                    if end > limit {
                        break;
                    }
                    ends.push(end);
                    from = end + 1;
                }
                ends
            }
            Some(Part::Simple(_) | Part::Reserved(_)) => Vec::new(),
        };
        // A value is whole only up to the first bad escape, and never ends inside one.
        let bad = first_bad_escape(&rest[..limit], simple);
        let bytes = rest.as_bytes();
        for end in ends {
            let splits_escape =
                (end >= 1 && bytes[end - 1] == b'%') || (end >= 2 && bytes[end - 2] == b'%');
            if end == 0 || end > bad || splits_escape || !rest.is_char_boundary(end) {
                continue;
            }
            let mark = self.values.len();
            if !self.from(k + 1, pos + end) {
                continue;
            }
            // Decoded once it is known to fit, and put before what the later parts bound.
            if self.spend(end)
                && let Some(value) = percent_decode(&rest[..end])
                && !(simple && (value == "." || value == ".."))
            {
                self.values.insert(mark, (name.to_owned(), value));
                return true;
            }
            self.values.truncate(mark);
        }
        false
    }
}

/// Where `needle` first occurs in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Where the first escape of a raw value starts that is not `%` and two hex digits (or, for
/// a simple variable, that stands for `/`); the value's length when there is none. A value
/// must end before it.
fn first_bad_escape(raw: &str, simple: bool) -> usize {
    let bytes = raw.as_bytes();
    let mut i = 0;
    while let Some(at) = bytes[i..].iter().position(|&b| b == b'%') {
        let at = i + at;
        let Some(hex) = bytes.get(at + 1..at + 3) else {
            // Cut short by the end of the value: only a longer value could complete it,
            // and the value cannot be longer.
            return at;
        };
        if !hex.iter().all(u8::is_ascii_hexdigit) || (simple && hex.eq_ignore_ascii_case(b"2f")) {
            return at;
        }
        i = at + 3;
    }
    raw.len()
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
pub(crate) fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            // `from_str_radix` also reads a sign ("%+1"), which is no escape (RFC 3986, 2.1).
            if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
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
        let long = format!("test://files/{}", "a/".repeat(100_000));
        assert_eq!(
            files.matches(&long).unwrap().get("path").unwrap().len(),
            200_000
        );
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
    fn static_templates_match_exactly() {
        let t = UriTemplate::parse("test://static").unwrap();
        assert!(t.is_static());
        assert!(t.matches("test://static").is_some());
        assert!(t.matches("test://static/x").is_none());
    }
}
