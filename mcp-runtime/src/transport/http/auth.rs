//! Bearer tokens: how a verifier says who holds one ([`TokenVerifier`]), why one is refused
//! ([`AuthRejection`]), and a table of fixed tokens compared in constant time
//! ([`BearerTokens`]).

use std::future::Future;
use std::pin::Pin;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::auth::AuthInfo;

/// Why a bearer token was not accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthRejection {
    /// The token is unknown, expired, or malformed: answered with 401.
    InvalidToken(String),
    /// The token is valid but lacks these scopes: answered with 403 `insufficient_scope`.
    InsufficientScope(Vec<String>),
    /// The token could not be checked now (the authorization server is unreachable):
    /// answered with 503 and `Retry-After`, so the client retries rather than drops a token
    /// that may be good.
    Unavailable(String),
}

/// Checks a bearer token and says who holds it.
///
/// Implemented for closures `Fn(&str) -> Result<AuthInfo, AuthRejection>`; implement the
/// trait for verifiers that must await. For a fixed set of tokens, [`BearerTokens`] compares
/// them in constant time; for tokens of an OAuth authorization server, the `oauth` feature's
/// `JwtVerifier` (JWTs checked with its published keys) and `Introspection` (RFC 7662) are
/// built in.
///
/// ```
/// use mcp_runtime::{AuthInfo, http::{AuthRejection, BearerTokens}};
///
/// // A lookup in a token table (compare secrets in constant time: see `BearerTokens`).
/// let tokens = BearerTokens::new().token("secret-token", AuthInfo::new("ada").scopes(["mcp"]));
/// let verify = move |token: &str| {
///     tokens.find(token).ok_or_else(|| AuthRejection::InvalidToken("unknown token".into()))
/// };
/// # let _ = mcp_runtime::http::HttpOptions::default().auth(verify);
/// ```
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token`.
    fn verify<'a>(
        &'a self,
        token: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<AuthInfo, AuthRejection>> + Send + 'a>>;
}

impl<F> TokenVerifier for F
where
    F: Fn(&str) -> Result<AuthInfo, AuthRejection> + Send + Sync + 'static,
{
    fn verify<'a>(
        &'a self,
        token: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<AuthInfo, AuthRejection>> + Send + 'a>> {
        let outcome = self(token);
        Box::pin(async move { outcome })
    }
}

/// A fixed table of bearer tokens and the callers they name, compared in constant time: a
/// plain `==` on a secret stops at the first differing byte, and the time it takes tells an
/// attacker how much of a guess was right.
///
/// Each token is kept as its HMAC-SHA256 under a key drawn at start-up, and a presented token
/// is checked with the MAC's constant-time verification against every entry, so neither
/// the position of a difference nor the table's contents show in the timing.
///
/// ```
/// use mcp_runtime::AuthInfo;
/// use mcp_runtime::http::{BearerTokens, HttpOptions};
///
/// let tokens = BearerTokens::new()
///     .token(std::env::var("ADA_TOKEN").unwrap_or_default(), AuthInfo::new("ada"))
///     .token(std::env::var("BOB_TOKEN").unwrap_or_default(), AuthInfo::new("bob"));
/// let options = HttpOptions::default().auth(tokens);
/// # let _ = options;
/// ```
#[derive(Clone)]
pub struct BearerTokens {
    key: [u8; 32],
    entries: Vec<([u8; 32], AuthInfo)>,
}

impl Default for BearerTokens {
    fn default() -> Self {
        BearerTokens::new()
    }
}

impl std::fmt::Debug for BearerTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerTokens")
            .field("tokens", &self.entries.len())
            .finish_non_exhaustive()
    }
}

impl BearerTokens {
    /// An empty table (it accepts nothing).
    pub fn new() -> Self {
        let mut key = [0u8; 32];
        // Without the operating system's generator the key stays fixed; the comparison is
        // constant-time all the same, only the stored MACs are then predictable.
        let _ = getrandom::fill(&mut key);
        BearerTokens {
            key,
            entries: Vec::new(),
        }
    }

    /// Adds a token and the caller it names. Empty tokens are never accepted.
    pub fn token(mut self, token: impl AsRef<str>, caller: AuthInfo) -> Self {
        let token = token.as_ref();
        if !token.is_empty() {
            let mac = self.mac(token).finalize().into_bytes().into();
            self.entries.push((mac, caller));
        }
        self
    }

    fn mac(&self, token: &str) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        mac.update(token.as_bytes());
        mac
    }

    /// The caller a token names, if it is in the table.
    pub fn find(&self, token: &str) -> Option<AuthInfo> {
        // The presented token is hashed once, whatever its length and the table's size.
        let presented = self.mac(token).finalize();
        let mut found = None;
        // Every entry is compared, in constant time, so the time does not say which one
        // matched, nor how much of one did.
        for (expected, caller) in &self.entries {
            let expected = hmac::digest::CtOutput::<Hmac<Sha256>>::new((*expected).into());
            if presented == expected && found.is_none() {
                found = Some(caller.clone());
            }
        }
        found
    }
}

impl TokenVerifier for BearerTokens {
    fn verify<'a>(
        &'a self,
        token: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<AuthInfo, AuthRejection>> + Send + 'a>> {
        let outcome = self
            .find(token)
            .ok_or_else(|| AuthRejection::InvalidToken("unknown token".into()));
        Box::pin(async move { outcome })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens_find_exactly_their_own_callers() {
        let tokens = BearerTokens::new()
            .token("alpha-token", AuthInfo::new("ada"))
            .token("beta-token", AuthInfo::new("bob"))
            .token("", AuthInfo::new("nobody"));
        assert_eq!(tokens.find("alpha-token").unwrap().subject, "ada");
        assert_eq!(tokens.find("beta-token").unwrap().subject, "bob");
        assert!(tokens.find("alpha-toke").is_none());
        assert!(tokens.find("alpha-tokenx").is_none());
        assert!(tokens.find("").is_none());
    }
}
