//! URI templates: parse arbitrary templates, match arbitrary URIs, and match the expansions
//! (RFC 6570, levels 1 and 2 and form-style query) of templates built from arbitrary pieces.
//!
//! Checked: nothing panics; a simple `{var}` never binds an empty value, one holding `/`, or
//! `.`/`..`; a match's variables expand back to the URI matched (compared with percent escapes
//! decoded, and query pairs in any order), and that expansion matches again, with variables
//! that describe the same URI — except where the RFC's expansion loses information (a `{+var}` value holding
//! a `%XX` triplet, `?` or `#`, or a reserved character one of the template's literals holds,
//! which reserved expansion leaves as they are); and the expansion of a built
//! template matches it whenever every value is one the matcher accepts by design.

#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use mcp_grammar::uri_template as grammar;
use mcp_runtime::UriTemplate;

#[derive(Arbitrary, Debug)]
enum Input<'a> {
    /// A template and a URI, as given.
    Raw { template: &'a str, uri: &'a str },
    /// A template built from pieces, and its expansion with these values.
    Built(Vec<Piece<'a>>),
}

#[derive(Arbitrary, Debug)]
enum Piece<'a> {
    Literal(&'a str),
    Simple(&'a str),
    Reserved(&'a str),
    /// A query expression (always put last), with each variable's value or none.
    Query(Vec<Option<&'a str>>),
}

fuzz_target!(|input: Input<'_>| match input {
    Input::Raw { template, uri } => raw(template, uri),
    Input::Built(pieces) => built(&pieces),
});

fn raw(template: &str, uri: &str) {
    let Ok(t) = UriTemplate::parse(template) else {
        return;
    };
    assert_eq!(t.as_str(), template);
    if let Some(vars) = t.matches(uri) {
        check_match(&t, &parts(template), uri, &vars);
    }
}

fn built(pieces: &[Piece<'_>]) {
    let mut template = String::new();
    let mut parts = Vec::new();
    let mut values: Vec<(String, String)> = Vec::new();
    let mut query = None;
    let mut fit = true;
    for (i, piece) in pieces.iter().enumerate() {
        match piece {
            Piece::Literal(text) => {
                let text: String = text.chars().filter(|c| !matches!(c, '{' | '}')).collect();
                if text.is_empty() {
                    continue;
                }
                template.push_str(&text);
                parts.push(Part::Literal(text));
            }
            Piece::Simple(value) | Piece::Reserved(value) => {
                if matches!(parts.last(), Some(Part::Simple(_) | Part::Reserved(_))) {
                    continue; // two variables in a row are refused by design
                }
                let name = format!("v{i}");
                let simple = matches!(piece, Piece::Simple(_));
                template.push_str(&format!("{{{}{name}}}", if simple { "" } else { "+" }));
                parts.push(if simple {
                    Part::Simple(name.clone())
                } else {
                    Part::Reserved(name.clone())
                });
                // What the matcher refuses on purpose: empty values; for `{var}` a value that
                // leaves its segment; for `{+var}` one holding `?` or `#` (which reserved
                // expansion leaves as they are) or a `%XX` triplet (passed through).
                fit &= !value.is_empty()
                    && if simple {
                        !value.contains('/') && *value != "." && *value != ".."
                    } else {
                        !value.contains(['?', '#']) && !has_triplet(value)
                    };
                values.push((name, (*value).to_owned()));
            }
            Piece::Query(vars) => query = Some((i, vars)),
        }
    }
    if let Some((i, vars)) = query
        && !vars.is_empty()
    {
        let names: Vec<String> = (0..vars.len()).map(|j| format!("q{i}x{j}")).collect();
        template.push_str(&format!("{{?{}}}", names.join(",")));
        for (name, value) in names.iter().zip(vars) {
            if let Some(value) = value {
                values.push((name.clone(), (*value).to_owned()));
            }
        }
        parts.push(Part::Query(names));
    }
    let t = UriTemplate::parse(&template)
        .unwrap_or_else(|e| panic!("a well-formed template {template:?} is refused: {e}"));
    let uri = expand(&parts, &values);
    match t.matches(&uri) {
        Some(vars) => check_match(&t, &parts, &uri, &vars),
        None => assert!(
            !fit,
            "{template:?} does not match its own expansion {uri:?} of {values:?}"
        ),
    }
}

/// The checks on any match.
fn check_match(t: &UriTemplate, parts: &[Part], uri: &str, vars: &mcp_runtime::UriVariables) {
    let bound: Vec<(String, String)> = vars
        .iter()
        .map(|(n, v)| (n.to_owned(), v.to_owned()))
        .collect();
    let names: Vec<&str> = t.variable_names().collect();
    for (i, (name, value)) in bound.iter().enumerate() {
        assert!(
            names.contains(&name.as_str()),
            "{name} is no variable of {t}"
        );
        assert!(
            bound[..i].iter().all(|(n, _)| n != name),
            "{name} bound twice in {uri:?}"
        );
        let part = parts.iter().find(|p| p.names().contains(&name.as_str()));
        match part {
            Some(Part::Simple(_)) => assert!(
                !value.is_empty() && !value.contains('/') && value != "." && value != "..",
                "{t} matched {uri:?} binding {name} to {value:?}, which leaves its segment"
            ),
            Some(Part::Reserved(_)) => assert!(!value.is_empty(), "{t}: {name} empty in {uri:?}"),
            _ => {}
        }
    }
    // Reserved expansion passes `%XX` triplets through and leaves reserved characters as they
    // are: a value holding a triplet (decoded from `%25XX`), `?` or `#`, or a reserved
    // character that a literal of the template also holds (`'{+a}'{+b}` with a value holding
    // `'`), expands to a URI that reads back differently. The RFC does not promise more.
    let literal_chars: String = parts
        .iter()
        .filter_map(|p| match p {
            Part::Literal(l) => Some(l.as_str()),
            _ => None,
        })
        .collect();
    let lossy = parts.iter().any(|p| match p {
        Part::Reserved(n) => bound.iter().any(|(b, v)| {
            b == n
                && (has_triplet(v)
                    || v.contains(['?', '#'])
                    || v.chars()
                        .any(|c| RESERVED.contains(c) && literal_chars.contains(c)))
        }),
        _ => false,
    });
    // RFC 6570, 2.1: a literal holds no control character, space, `"'%<>\\^`|` (or braces)
    // but as a `%XX` triplet. A template whose literals break that (the matcher takes them)
    // has no expansion to compare with; nor, with `?` in a literal, a query to find.
    let rfc_literals = parts.iter().all(|p| match p {
        Part::Literal(l) => {
            let b = l.as_bytes();
            (0..b.len()).all(|i| match b[i] {
                b'%' => is_triplet(&b[i..]),
                c => !(c.is_ascii_control() || b" \"'<>\\^`|?".contains(&c)),
            })
        }
        _ => true,
    });
    if lossy || !rfc_literals {
        return;
    }
    let again = expand(parts, &bound);
    let rematched = t.matches(&again).unwrap_or_else(|| {
        panic!("{t} matched {uri:?} but not the expansion {again:?} of {bound:?}")
    });
    // Where a variable's value may end like the literal after it (`{+a}UU{b}`), the shortest
    // match of an equivalent URI (`%55` for `U`) can split it elsewhere: the bindings may
    // differ, the URI they describe may not.
    let second: Vec<(String, String)> = rematched
        .iter()
        .map(|(n, v)| (n.to_owned(), v.to_owned()))
        .collect();
    let has_query = parts.iter().any(|p| matches!(p, Part::Query(_)));
    assert_eq!(
        canonical(&again, has_query),
        canonical(&expand(parts, &second), has_query),
        "{t}: {uri:?} and its expansion {again:?} bind to different URIs: {bound:?}, {second:?}"
    );
    // The expansion is the URI, up to percent-encoding and the order of query pairs. Where a
    // literal holds `?`, the URI's query cannot be told apart from the rest: not compared.
    let literal_query = parts
        .iter()
        .any(|p| matches!(p, Part::Literal(l) if l.contains('?')));
    if !literal_query {
        assert_eq!(
            canonical(uri, has_query),
            canonical(&again, has_query),
            "{t}: {uri:?} expands back to {again:?}"
        );
    }
}

/// The characters `{+var}` leaves as they are, besides unreserved ones (RFC 3986, 2.2).
const RESERVED: &str = ":/?#[]@!$&'()*+,;=";

#[derive(Debug)]
enum Part {
    Literal(String),
    Simple(String),
    Reserved(String),
    Query(Vec<String>),
}

impl Part {
    fn names(&self) -> Vec<&str> {
        match self {
            Part::Literal(_) => Vec::new(),
            Part::Simple(n) | Part::Reserved(n) => vec![n],
            Part::Query(names) => names.iter().map(String::as_str).collect(),
        }
    }
}

/// The parts of a template `UriTemplate::parse` accepted, as the grammar it shares with
/// `#[resource]` reads them.
fn parts(template: &str) -> Vec<Part> {
    grammar::parse(template)
        .pieces
        .into_iter()
        .map(|piece| match piece {
            grammar::Piece::Literal { text, .. } => Part::Literal(text.to_owned()),
            grammar::Piece::Expression(e) => {
                let mut names = e.names.into_iter().map(str::to_owned);
                match e.operator {
                    grammar::Operator::Query => Part::Query(names.collect()),
                    grammar::Operator::Reserved => Part::Reserved(names.next().expect("a name")),
                    _ => Part::Simple(names.next().expect("a name")),
                }
            }
        })
        .collect()
}

/// RFC 6570 expansion: `{var}` keeps unreserved characters only, `{+var}` reserved ones and
/// `%XX` triplets too, `{?a,b}` is form-style (`?a=1&b=2`, undefined variables left out).
fn expand(parts: &[Part], values: &[(String, String)]) -> String {
    let value = |name: &str| {
        values
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    let mut out = String::new();
    for part in parts {
        match part {
            Part::Literal(l) => out.push_str(l),
            Part::Simple(n) => encode(&mut out, value(n).unwrap_or(""), false),
            Part::Reserved(n) => encode(&mut out, value(n).unwrap_or(""), true),
            Part::Query(names) => {
                let mut first = true;
                for name in names {
                    if let Some(v) = value(name) {
                        out.push(if first { '?' } else { '&' });
                        first = false;
                        out.push_str(name);
                        out.push('=');
                        encode(&mut out, v, false);
                    }
                }
            }
        }
    }
    out
}

fn encode(out: &mut String, value: &str, reserved: bool) {
    let bytes = value.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let unreserved = b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~');
        let kept_reserved = reserved && RESERVED.as_bytes().contains(&b);
        if reserved && b == b'%' && is_triplet(&bytes[i..]) {
            out.push_str(&value[i..i + 3]);
            i += 3;
            continue;
        }
        if unreserved || kept_reserved {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
        i += 1;
    }
}

fn is_triplet(bytes: &[u8]) -> bool {
    bytes.len() >= 3
        && bytes[0] == b'%'
        && bytes[1].is_ascii_hexdigit()
        && bytes[2].is_ascii_hexdigit()
}

fn has_triplet(value: &str) -> bool {
    (0..value.len()).any(|i| is_triplet(&value.as_bytes()[i..]))
}

/// Percent escapes decoded (strictly: `%` and two hex digits); with a query, its pairs split,
/// `+` read as a space, empty pairs dropped, and sorted.
fn canonical(uri: &str, has_query: bool) -> (Vec<u8>, Vec<(Vec<u8>, Vec<u8>)>) {
    let (path, query) = match uri.split_once('?') {
        Some((path, query)) if has_query => (path, Some(query)),
        _ => (uri, None),
    };
    let mut pairs: Vec<(Vec<u8>, Vec<u8>)> = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(&v.replace('+', " ")))
        })
        .collect();
    pairs.sort();
    (decode(path), pairs)
}

fn decode(s: &str) -> Vec<u8> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if is_triplet(&bytes[i..]) {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("00");
            out.push(u8::from_str_radix(hex, 16).unwrap_or(0));
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}
