//! The authorization server's metadata, found from its issuer URL: RFC 8414
//! (`/.well-known/oauth-authorization-server`), then OpenID Connect Discovery
//! (`/.well-known/openid-configuration`, inserted before the issuer's path and appended to
//! it).

use serde_json::Value;

use super::fetch::Fetcher;

/// What the verifiers need of the authorization server's metadata.
#[derive(Clone, Debug)]
pub(crate) struct Metadata {
    pub(crate) jwks_uri: Option<String>,
    pub(crate) introspection_endpoint: Option<String>,
}

/// The metadata URLs to try for `issuer`, in order.
pub(crate) fn candidates(issuer: &str) -> Result<Vec<String>, String> {
    let uri = super::fetch::checked(issuer)?;
    if uri.query().is_some() {
        return Err(format!(
            "the issuer `{issuer}` has a query: an issuer URL has none"
        ));
    }
    let scheme = uri.scheme_str().unwrap_or("https");
    let authority = uri.authority().map_or("", |a| a.as_str());
    let path = uri.path().trim_end_matches('/');
    let origin = format!("{scheme}://{authority}");
    let mut urls = vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
    ];
    if !path.is_empty() {
        urls.push(format!("{origin}{path}/.well-known/openid-configuration"));
    }
    Ok(urls)
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
    fn metadata_urls_follow_rfc_8414_then_openid_discovery() {
        assert_eq!(
            candidates("https://auth.example.com").unwrap(),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            candidates("https://auth.example.com/tenant1/").unwrap(),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        assert!(candidates("http://auth.example.com").is_err());
        assert!(candidates("https://auth.example.com/?tenant=1").is_err());
    }

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
