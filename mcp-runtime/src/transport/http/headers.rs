//! The request metadata headers of the stateless era (2026-07-28): `MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name` and the `Mcp-Param-{Name}` headers that mirror tool arguments
//! marked `x-mcp-header`. Intermediaries route on them, so the server refuses any that
//! disagree with the body (`HeaderMismatch`, -32020, HTTP 400).

use std::borrow::Cow;

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;
use serde_json::Value;

use crate::protocol::Method;
use crate::protocol::{Envelope, Text};
use crate::registry::headers::{HeaderParam, Primitive};
use crate::server::Server;
use crate::server::stateless::{STATELESS_VERSIONS, StatelessParams, may_name_a_revision};

/// Header names made once: looking a header up by a `&str` parses and lowers the name each
/// time (several hundred instructions a lookup), by a `HeaderName` only hashes it.
pub(super) static VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");
pub(super) static METHOD_HEADER: HeaderName = HeaderName::from_static("mcp-method");
pub(super) static NAME_HEADER: HeaderName = HeaderName::from_static("mcp-name");

/// The body field a method's `Mcp-Name` header mirrors (from the method table).
fn name_field(method: &str) -> Option<&'static str> {
    Method::parse(method)?.target()
}

/// What the headers are compared with, borrowed from the body; the arguments are read only
/// for a tool that mirrors some of them. The parameters are read as the dispatch reads a
/// stateless request's, and handed to it.
#[derive(Deserialize)]
struct Named<'a> {
    #[serde(borrow, default)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<StatelessParams<'a>>,
}

/// The body field a method's `Mcp-Name` mirrors, when it is a string.
fn name_of(params: &StatelessParams<'_>, field: &str) -> Option<String> {
    let raw = match field {
        "name" => params.name,
        "uri" => params.uri,
        _ => params.task_id,
    }?;
    serde_json::from_str::<String>(raw.get()).ok()
}

/// Whether a POST belongs to the stateless era — its `_meta` or its `MCP-Protocol-Version`
/// names a stateless revision, or it is `server/discover` — and if so, whether its headers agree with its body.
/// `sent_version` is the request's `MCP-Protocol-Version`, which the endpoint reads once for
/// this and for the handshake era's revision.
pub(super) fn check_stateless<'a>(
    headers: &HeaderMap,
    sent_version: Option<&HeaderValue>,
    body: &'a [u8],
    message: Option<&Envelope<'a>>,
    server: &Server,
) -> Option<Result<Option<StatelessParams<'a>>, String>> {
    // A value that is not visible ASCII is no revision the server knows; a proxy may still
    // read one into it, so a stateless request that sends one is refused below.
    let unreadable_version = sent_version.is_some_and(|v| v.to_str().is_err());
    let sent_version = sent_version.and_then(|v| v.to_str().ok());
    let header_says = sent_version.is_some_and(|v| STATELESS_VERSIONS.contains(&v));
    let body_may = may_name_a_revision(body);
    // `server/discover` belongs to the stateless era with or without `_meta`, as the
    // dispatch takes it: it is never served in a session.
    let discover =
        message.is_some_and(|m| m.method_and_params().0 == Some(Method::ServerDiscover.name()));
    if !header_says && !body_may && !discover {
        return None;
    }
    // A message the server has read already lends its method and parameters, and only the
    // parameters are read again (and handed to the dispatch, which does not read them a
    // third time); any other body (a batch, say) is read here. A body that cannot be read as
    // a request has nothing to compare the headers with: the dispatch says what is wrong
    // with it (-32700, -32600), as it does of a `_meta` that is not an object.
    let named = match message {
        Some(message) => {
            let (method, params) = message.method_and_params();
            // `"params": null` is no parameters, as the whole body's reading takes it.
            let params = params.filter(|p| p.get() != "null");
            StatelessParams::read(params)
                .ok()
                .map(|read| (method.map(std::borrow::Cow::Borrowed), params.map(|_| read)))
        }
        None => serde_json::from_slice::<Named<'_>>(body)
            .ok()
            .map(|named| (named.method, named.params)),
    };
    let Some((method, params)) = named.filter(|(_, p)| {
        !p.as_ref()
            .is_some_and(StatelessParams::meta_is_not_an_object)
    }) else {
        return (header_says || discover).then_some(Ok(None));
    };
    // The key may be in an argument's text: only `_meta` makes the request stateless.
    let body_says = discover || params.as_ref().is_some_and(|p| p.meta_version().is_some());
    if !header_says && !body_says {
        return None;
    }
    if unreadable_version {
        return Some(Err(unreadable("MCP-Protocol-Version")));
    }
    Some(
        check(
            headers,
            sent_version,
            method.as_deref(),
            params.as_ref(),
            server,
        )
        .map(|()| {
            // Only a message's own parameters are handed on: a body read here is not routed
            // as it was read.
            message.map(|_| params.unwrap_or_default())
        }),
    )
}

fn check(
    headers: &HeaderMap,
    sent_version: Option<&str>,
    method: Option<&str>,
    params: Option<&StatelessParams<'_>>,
    server: &Server,
) -> Result<(), String> {
    compare(
        "Mcp-Method",
        header_text(headers, &METHOD_HEADER, "Mcp-Method")?,
        method,
    )?;
    let name = method
        .and_then(name_field)
        .and_then(|field| name_of(params?, field));
    let name = name.as_deref();
    let sent_name = match header_text(headers, &NAME_HEADER, "Mcp-Name")? {
        Some(sent) => Some(decode(sent).map_err(|p| format!("header mismatch: Mcp-Name {p}"))?),
        None => None,
    };
    compare("Mcp-Name", sent_name.as_deref(), name)?;
    // The body's `_meta` version is compared before it is judged supported, so a
    // disagreement is a mismatch whatever the versions are.
    let body_version = params
        .and_then(StatelessParams::meta_version)
        .and_then(|raw| serde_json::from_str::<Text<'_>>(raw.get()).ok());
    if let (Some(sent), Some(Text(body))) = (sent_version, body_version)
        && sent != body
    {
        return Err(format!(
            "header mismatch: MCP-Protocol-Version is {sent:?} but `_meta` says {body:?}"
        ));
    }
    if method.and_then(Method::parse) == Some(Method::ToolsCall)
        && let Some(tool) = name.and_then(|n| server.catalogue().tool(n).cloned())
        && !tool.headers.is_empty()
    {
        let arguments: Value = params
            .and_then(|p| p.arguments)
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
            .unwrap_or(Value::Null);
        for param in &tool.headers {
            check_param(headers, param, &arguments)?;
        }
    }
    Ok(())
}

/// A standard header must be there when the body holds its value, and must agree with it.
fn compare(header: &str, sent: Option<&str>, body: Option<&str>) -> Result<(), String> {
    match (sent, body) {
        (sent, body) if sent == body => Ok(()),
        (None, None) => Ok(()),
        (None, Some(body)) => Err(format!(
            "header mismatch: {header} is missing but the body says {body:?}"
        )),
        (Some(sent), body) => Err(format!(
            "header mismatch: {header} is {sent:?} but the body says {:?}",
            body.unwrap_or("")
        )),
    }
}

/// One mirrored argument: its header must be there exactly when the argument is, and say the
/// same value.
fn check_param(headers: &HeaderMap, param: &HeaderParam, arguments: &Value) -> Result<(), String> {
    let header = format!("Mcp-Param-{}", param.name);
    let raw = headers.get(param.header.as_str());
    let value = param.value_in(arguments);
    let (raw, value) = match (raw, value) {
        (None, None) => return Ok(()),
        (None, Some(value)) => {
            return Err(format!(
                "header mismatch: {header} is missing but the argument `{}` is {value}",
                param.path.join(".")
            ));
        }
        (Some(_), None) => {
            return Err(format!(
                "header mismatch: {header} is given but the call has no argument `{}`",
                param.path.join(".")
            ));
        }
        (Some(raw), Some(value)) => (raw, value),
    };
    let sent = raw.to_str().map_err(|_| unreadable(&header))?;
    let sent =
        decode(sent.trim()).map_err(|problem| format!("header mismatch: {header} {problem}"))?;
    if same_value(&sent, value, param.kind) {
        Ok(())
    } else {
        Err(format!(
            "header mismatch: {header} is {sent:?} but the argument `{}` is {value}",
            param.path.join(".")
        ))
    }
}

/// Whether a header's text says the argument's value: strings exactly, integers as numbers
/// (`42.0` is `42`), booleans as `true` or `false`.
fn same_value(sent: &str, value: &Value, kind: Primitive) -> bool {
    match (kind, value) {
        (Primitive::String, Value::String(s)) => sent == s,
        // Compared exactly where both are integers: as floats, 9007199254740993 would be
        // 9007199254740992, and a proxy could route on one while the tool acts on the other.
        (Primitive::Integer, Value::Number(n)) => match (sent.parse::<i128>(), as_i128(n)) {
            (Ok(a), Some(b)) => a == b,
            _ => match (sent.parse::<f64>(), n.as_f64()) {
                (Ok(a), Some(b)) => a == b && a.fract() == 0.0 && a.abs() < 9_007_199_254_740_992.0,
                _ => false,
            },
        },
        (Primitive::Boolean, Value::Bool(b)) => sent == if *b { "true" } else { "false" },
        _ => false,
    }
}

/// A JSON number as an exact integer, when it is one.
fn as_i128(n: &serde_json::Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

/// A header value as written, or the UTF-8 text of its Base64 when it is wrapped as
/// `=?base64?…?=` (strictly: the standard alphabet with its padding).
fn decode(value: &str) -> Result<Cow<'_, str>, &'static str> {
    match value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    {
        Some(encoded) => {
            let bytes = STANDARD
                .decode(encoded)
                .map_err(|_| "is not valid Base64 inside `=?base64?…?=`")?;
            String::from_utf8(bytes)
                .map(Cow::Owned)
                .map_err(|_| "does not decode to UTF-8 text")
        }
        None => Ok(Cow::Borrowed(value)),
    }
}

/// A header's text; one that is there but not visible ASCII is refused rather than taken
/// for absent, since a proxy may read it as something.
fn header_text<'a>(
    headers: &'a HeaderMap,
    name: &HeaderName,
    written: &str,
) -> Result<Option<&'a str>, String> {
    headers
        .get(name)
        .map(|h| h.to_str().map_err(|_| unreadable(written)))
        .transpose()
}

fn unreadable(header: &str) -> String {
    format!("header mismatch: {header} holds characters a header value may not")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn base64_values_are_decoded_strictly_and_others_are_literal() {
        assert_eq!(decode("=?base64?SGVsbG8=?="), Ok("Hello".into()));
        assert!(decode("=?base64?SGVsbG8?=").is_err(), "missing padding");
        assert!(decode("=?base64?SGVs!!!bG8=?=").is_err());
        assert_eq!(decode("SGVsbG8="), Ok("SGVsbG8=".into()));
        assert_eq!(decode("=?base64?SGVsbG8="), Ok("=?base64?SGVsbG8=".into()));
        assert_eq!(
            decode("=?base64?SGVsbG8sIOS4lueVjA==?="),
            Ok("Hello, 世界".into())
        );
    }

    #[test]
    fn integers_compare_as_numbers_and_booleans_as_words() {
        assert!(same_value("42.0", &json!(42), Primitive::Integer));
        assert!(!same_value("43", &json!(42), Primitive::Integer));
        assert!(same_value("false", &json!(false), Primitive::Boolean));
        assert!(!same_value("False", &json!(false), Primitive::Boolean));
        assert!(!same_value("1", &json!("01"), Primitive::String));
        // Past 2^53, floats would call these equal.
        assert!(!same_value(
            "9007199254740992",
            &json!(9_007_199_254_740_993_u64),
            Primitive::Integer
        ));
        assert!(same_value(
            "9007199254740993",
            &json!(9_007_199_254_740_993_u64),
            Primitive::Integer
        ));
        assert!(!same_value(
            "9007199254740993.0",
            &json!(9_007_199_254_740_992_u64),
            Primitive::Integer
        ));
    }
}
