//! The headers tool arguments are mirrored into (MCP 2026-07-28, `x-mcp-header`): an argument
//! marked with a name travels in `Mcp-Param-{name}` too, and the name is an HTTP field name
//! (RFC 9110, section 5.1: a `token`). Names are compared without regard to case, as HTTP
//! compares field names.

/// What comes before a mirrored argument's name in its header.
pub const PREFIX: &str = "Mcp-Param-";

/// The characters of an RFC 9110 `token` besides ASCII letters and digits (section 5.6.2).
pub const TOKEN_PUNCTUATION: &str = "!#$%&'*+-.^_`|~";

/// Why a name cannot be a header's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameProblem {
    /// The name is empty.
    Empty,
    /// The first character that a `token` cannot hold.
    Character(char),
}

/// Checks that `name` is an HTTP field name (RFC 9110 `token`): one or more ASCII letters,
/// digits and [`TOKEN_PUNCTUATION`].
///
/// ```
/// use mcp_grammar::header::{NameProblem, check_name};
///
/// assert_eq!(check_name("Tenant-Id"), Ok(()));
/// assert_eq!(check_name(""), Err(NameProblem::Empty));
/// assert_eq!(check_name("Tenant Id"), Err(NameProblem::Character(' ')));
/// ```
pub fn check_name(name: &str) -> Result<(), NameProblem> {
    if name.is_empty() {
        return Err(NameProblem::Empty);
    }
    match name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || TOKEN_PUNCTUATION.contains(*c)))
    {
        None => Ok(()),
        Some(c) => Err(NameProblem::Character(c)),
    }
}

/// The name a parameter is mirrored under when none is given: its words capitalised and
/// joined with `-`.
///
/// ```
/// use mcp_grammar::header::default_name;
///
/// assert_eq!(default_name("region"), "Region");
/// assert_eq!(default_name("tenant_id"), "Tenant-Id");
/// ```
pub fn default_name(parameter: &str) -> String {
    parameter
        .split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join("-")
}

/// The whole header a name stands for, in lower case, the form in which two names are the
/// same header.
///
/// ```
/// use mcp_grammar::header::field_name;
///
/// assert_eq!(field_name("Region"), "mcp-param-region");
/// assert_eq!(field_name("REGION"), field_name("region"));
/// ```
pub fn field_name(name: &str) -> String {
    format!("{PREFIX}{name}").to_ascii_lowercase()
}

/// Whether two names are the same header.
///
/// ```
/// assert!(mcp_grammar::header::same_header("Tenant-Id", "tenant-id"));
/// ```
pub fn same_header(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_an_http_token() {
        assert_eq!(check_name("X-Custom_1.v2~!#$%&'*+^`|"), Ok(()));
        assert_eq!(check_name("Région"), Err(NameProblem::Character('é')));
        assert_eq!(check_name("a:b"), Err(NameProblem::Character(':')));
        assert_eq!(check_name("a\"b"), Err(NameProblem::Character('"')));
    }

    #[test]
    fn a_default_name_skips_empty_words() {
        assert_eq!(default_name("_tenant__id_"), "Tenant-Id");
        assert_eq!(default_name("api2_key"), "Api2-Key");
    }

    #[test]
    fn names_differing_in_case_are_one_header() {
        assert!(same_header("REGION", "region"));
        assert!(!same_header("Region", "Regions"));
        assert_eq!(field_name("Tenant-Id"), "mcp-param-tenant-id");
    }
}
