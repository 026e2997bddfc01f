//! The authorization server's metadata, found from its issuer URL: RFC 8414
//! (`/.well-known/oauth-authorization-server`), then OpenID Connect Discovery
//! (`/.well-known/openid-configuration`, inserted before the issuer's path and appended to
//! it).

use serde_json::Value;

use super::fetch::Fetcher;
use crate::outbound::metadata_candidates as candidates;

/// What the verifiers need of the authorization server's metadata.
#[derive(Clone, Debug)]
pub(crate) struct Metadata {
    pub(crate) jwks_uri: Option<String>,
    pub(crate) introspection_endpoint: Option<String>,
}

/// Fetches the first metadata document `issuer` publishes and checks that it names `issuer`
/// (RFC 8414 §3.3: a document for another issuer is not to be used).
pub(crate) async fn discover(fetcher: &Fetcher, issuer: &str) -> Result<Metadata, String> {
    let mut failures = Vec::new();
    for url in candidates(issuer)? {
        // A document for another issuer is not used; the next place may hold the right one.
        match fetcher
            .get_json(&url)
            .await
            .and_then(|document| metadata(issuer, &url, &document))
        {
            Ok(found) => return Ok(found),
            Err(failure) => failures.push(failure),
        }
    }
    Err(format!(
        "found no authorization server metadata for the issuer `{issuer}`: {}",
        failures.join("; ")
    ))
}

fn metadata(issuer: &str, url: &str, document: &Value) -> Result<Metadata, String> {
    let named = document.get("issuer").and_then(Value::as_str);
    if named != Some(issuer) {
        return Err(format!(
            "the metadata at {url} names the issuer {}, not `{issuer}`: give the issuer exactly as the authorization server spells it (it is the `iss` of its tokens)",
            named.map_or_else(|| "nothing".to_owned(), |n| format!("`{n}`"))
        ));
    }
    let text = |key: &str| document.get(key).and_then(Value::as_str).map(str::to_owned);
    Ok(Metadata {
        jwks_uri: text("jwks_uri"),
        introspection_endpoint: text("introspection_endpoint"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_for_another_issuer_is_refused() {
        let document = serde_json::json!({"issuer": "https://evil.example", "jwks_uri": "x"});
        let refused = metadata("https://auth.example.com", "u", &document).unwrap_err();
        assert!(refused.contains("`https://evil.example`"), "{refused}");
        let document = serde_json::json!({"issuer": "https://auth.example.com", "jwks_uri": "k"});
        let found = metadata("https://auth.example.com", "u", &document).unwrap();
        assert_eq!(found.jwks_uri.as_deref(), Some("k"));
    }
}
