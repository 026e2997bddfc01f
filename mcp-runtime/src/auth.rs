//! Who is calling: the identity and scopes an authorisation hook found in a request.

use serde_json::Value;

/// The caller of a request, as the transport's token verifier established it.
///
/// ```
/// let who = mcp_runtime::AuthInfo::new("ada").scopes(["files:read"]);
/// assert!(who.has_scope("files:read"));
/// assert!(!who.has_scope("files:write"));
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AuthInfo {
    /// The caller's identity (a user or client id).
    pub subject: String,
    /// The scopes the token grants.
    pub scopes: Vec<String>,
    /// The OAuth client the token was issued to (`client_id`), when the verifier knows it.
    pub client_id: Option<String>,
    /// Anything else the verifier wants handlers to see (claims, tenant, …).
    pub claims: Value,
}

impl AuthInfo {
    /// A caller with an identity and no scopes.
    pub fn new(subject: impl Into<String>) -> Self {
        AuthInfo {
            subject: subject.into(),
            ..AuthInfo::default()
        }
    }

    /// Sets the scopes.
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the OAuth client the token was issued to.
    pub fn client_id(mut self, client: impl Into<String>) -> Self {
        self.client_id = Some(client.into());
        self
    }

    /// Sets the extra claims.
    pub fn claims(mut self, claims: Value) -> Self {
        self.claims = claims;
        self
    }

    /// Whether the token grants a scope.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }
}
