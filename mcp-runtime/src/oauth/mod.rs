//! The server as an OAuth 2.1 resource server (feature `oauth`): bearer tokens verified
//! against the authorization server that issued them, as the MCP authorization
//! specification describes.
//!
//! - [`JwtVerifier`]: tokens that are JWTs, checked with the keys the authorization server
//!   publishes (its JWKS, found through its metadata) — no call to it per request.
//! - [`Introspection`]: opaque tokens, asked about at the authorization server's RFC 7662
//!   introspection endpoint, the answers kept for a short while.
//!
//! Both bind the token to this server (its audience must be this server's canonical URI)
//! and give handlers the same [`AuthInfo`]: subject, scopes, client id and
//! claims. Give one to [`HttpOptions::auth`](crate::http::HttpOptions::auth); the scopes a
//! tool, prompt or resource needs are declared on it (`#[tool(scopes("notes:write"))]`).

mod discovery;
mod fetch;
mod introspection;
mod jwt;
#[cfg(test)]
mod stub_provider;

pub use introspection::Introspection;
pub use jwt::JwtVerifier;

use serde_json::{Map, Value};

use crate::auth::AuthInfo;
use crate::http::AuthRejection;

/// The caller a token's claims (or an introspection answer) describe. The subject is `sub`;
/// a token for a client acting for itself may have none, and is then the client's, as
/// `client:<id>` (so no client id can pass for a user's subject). A token naming neither
/// is refused: the subject is what sessions, tasks and sealed state belong to, and callers
/// without one would share them.
fn auth_info(claims: Map<String, Value>) -> Result<AuthInfo, AuthRejection> {
    let text = |key: &str| {
        claims
            .get(key)
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
    };
    let client_id = text("client_id").or_else(|| text("azp"));
    let subject = text("sub")
        .or_else(|| client_id.as_ref().map(|id| format!("client:{id}")))
        .ok_or_else(|| {
            AuthRejection::InvalidToken("the token names no subject (sub) and no client".into())
        })?;
    // `scope` is a space-separated string (RFC 8693 §4.2, RFC 9068); some providers send
    // `scp`, as a list or a string.
    let scopes: Vec<String> = match claims.get("scope").or_else(|| claims.get("scp")) {
        Some(Value::String(list)) => list.split_whitespace().map(str::to_owned).collect(),
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    let mut info = AuthInfo::new(subject).scopes(scopes);
    info.client_id = client_id;
    Ok(info.claims(Value::Object(claims)))
}

fn unavailable(why: &str) -> AuthRejection {
    AuthRejection::Unavailable(why.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_become_the_caller() {
        let Value::Object(claims) = serde_json::json!({
            "sub": "ada", "scope": "notes:read  notes:write", "client_id": "cli",
            "tenant": "t1"
        }) else {
            unreachable!()
        };
        let info = auth_info(claims).unwrap();
        assert_eq!(info.subject, "ada");
        assert_eq!(info.scopes, ["notes:read", "notes:write"]);
        assert_eq!(info.client_id.as_deref(), Some("cli"));
        assert_eq!(info.claims["tenant"], "t1");

        let Value::Object(claims) = serde_json::json!({"azp": "svc", "scp": ["a", "b"]}) else {
            unreachable!()
        };
        let info = auth_info(claims).unwrap();
        assert_eq!(info.subject, "client:svc");
        assert_eq!(info.scopes, ["a", "b"]);

        let Value::Object(claims) = serde_json::json!({"sub": "", "scope": "a"}) else {
            unreachable!()
        };
        assert!(auth_info(claims).is_err(), "no one to own sessions");
    }
}
