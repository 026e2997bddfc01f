//! OAuth 2.1 for a client of a protected server, as the MCP authorization specification
//! describes: the server's protected-resource metadata (RFC 9728) found from its 401, the
//! authorization server's metadata (RFC 8414 or OpenID discovery), the client registered
//! (pre-registered, a client ID metadata document, or dynamic registration, RFC 7591), the
//! authorization code flow with PKCE (S256) and the resource indicator (RFC 8707), the
//! `iss` of the answer checked (RFC 9207), tokens refreshed, and more scopes asked for when a
//! 403 says `insufficient_scope`.
//!
//! The one step that needs a person is the user agent's: by default the authorization URL is
//! printed on standard error and a listener on `127.0.0.1` receives the redirect;
//! [`OAuth::on_authorize`] replaces that step.
//!
//! ```no_run
//! use mcp_runtime::client::{Client, oauth::OAuth};
//!
//! # async fn run() -> Result<(), mcp_runtime::client::CallError> {
//! let client = Client::builder()
//!     .oauth(OAuth::new().client_name("My agent").redirect_port(8976))
//!     .http("https://mcp.example.com/mcp")
//!     .await?;
//! # Ok(())
//! # }
//! ```

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::{ACCEPT, CONTENT_TYPE, LOCATION};
use hyper::{Method, Request, Uri};
use percent_encoding::percent_decode_str;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Mutex;

use super::CallError;
use super::auth::{Authorize, BoxFuture, Refusal};
use crate::outbound::{self, Reach};

/// How long one exchange with an authorization server may take.
const EXCHANGE_DEADLINE: Duration = Duration::from_secs(30);
/// The largest metadata or token answer read.
const MAX_ANSWER: usize = 1024 * 1024;
/// How long a person has to sign in before the flow gives up.
const SIGN_IN_DEADLINE: Duration = Duration::from_secs(300);
/// How many times the same scopes are asked for before a 403 is taken as final.
const MAX_SCOPE_ATTEMPTS: usize = 1;
/// A token this close to its expiry is refreshed before it is sent.
const EXPIRY_MARGIN: Duration = Duration::from_secs(30);
/// How many times a person is asked to sign in within `SIGN_IN_WINDOW`, whatever the
/// server's 401s and 403s ask: a hostile server could otherwise make every call a sign-in.
const MAX_SIGN_INS: usize = 4;
const SIGN_IN_WINDOW: Duration = Duration::from_secs(600);
/// How long the redirect listener waits for a connection's request before closing it, so
/// that an idle connection cannot hold the listener.
const CALLBACK_READ_DEADLINE: Duration = Duration::from_secs(10);

tokio::task_local! {
    /// Where the URLs of the sign-in in progress may lead, for `follow_redirect` called
    /// from its authorization step.
    static SIGN_IN_REACH: Reach;
}

type AuthorizeStep =
    Arc<dyn Fn(String, String) -> BoxFuture<'static, Result<String, String>> + Send + Sync>;

type Opener = Arc<dyn Fn(&str) + Send + Sync>;

/// How the client is known to the authorization server.
#[derive(Clone, Debug)]
enum Registration {
    /// Registered at run time (RFC 7591), when the server offers it.
    Dynamic,
    /// Registered beforehand.
    Given {
        client_id: String,
        client_secret: Option<String>,
    },
}

/// What an assertion is asked for: the authorization server it goes to (its `aud`), and
/// the resource the token is for.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AssertionRequest {
    /// The authorization server's issuer.
    pub issuer: String,
    /// The protected resource (the MCP server's canonical URI), if known.
    pub resource: Option<String>,
}

type AssertionStep =
    Arc<dyn Fn(AssertionRequest) -> BoxFuture<'static, Result<String, String>> + Send + Sync>;

/// How the client gets its token.
#[derive(Clone)]
enum Grant {
    /// A person signs in: the authorization code flow.
    Code,
    /// The client acts for itself with its secret (`client_credentials`).
    ClientCredentials,
    /// The client acts for itself, authenticated by a JWT it signs (`private_key_jwt`).
    PrivateKeyJwt(Arc<ring::signature::EcdsaKeyPair>),
    /// An assertion from elsewhere (a workload identity, an identity provider's ID-JAG) is
    /// exchanged for the token (RFC 7523).
    JwtBearer(AssertionStep),
}

/// OAuth settings for [`ClientBuilder::oauth`](super::ClientBuilder::oauth).
#[derive(Clone)]
#[must_use]
pub struct OAuth {
    client_name: String,
    registration: Registration,
    metadata_url: Option<String>,
    scopes: Option<Vec<String>>,
    redirect_port: u16,
    redirect_uri: Option<String>,
    authorize: Option<AuthorizeStep>,
    open: Option<Opener>,
    grant: Grant,
    dpop: bool,
}

impl Default for OAuth {
    fn default() -> Self {
        OAuth::new()
    }
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("client_name", &self.client_name)
            .field("metadata_url", &self.metadata_url)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl OAuth {
    /// Dynamic registration, scopes as the server asks, the redirect received on a free
    /// port of `127.0.0.1`, and the authorization URL printed on standard error.
    pub fn new() -> Self {
        OAuth {
            client_name: "mcp-runtime client".into(),
            registration: Registration::Dynamic,
            metadata_url: None,
            scopes: None,
            redirect_port: 0,
            redirect_uri: None,
            authorize: None,
            open: None,
            grant: Grant::Code,
            dpop: false,
        }
    }

    /// A client acting for itself (no person signs in): the `client_credentials` grant,
    /// authenticated with its secret (HTTP Basic, or in the body where the authorization
    /// server asks for that).
    pub fn client_credentials(
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        let mut oauth = OAuth::new().client_id(client_id, Some(client_secret.into()));
        oauth.grant = Grant::ClientCredentials;
        oauth
    }

    /// A client acting for itself, authenticated by a JWT it signs with its private key
    /// (`private_key_jwt`, RFC 7523): `pem` is a PKCS#8 P-256 key (ES256).
    pub fn private_key_jwt(client_id: impl Into<String>, pem: &str) -> Result<Self, String> {
        let der = pem_body(pem)?;
        let key = ring::signature::EcdsaKeyPair::from_pkcs8(
            &ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            &der,
            &ring::rand::SystemRandom::new(),
        )
        .map_err(|e| format!("the key is not a PKCS#8 P-256 private key: {e}"))?;
        let mut oauth = OAuth::new().client_id(client_id, None);
        oauth.grant = Grant::PrivateKeyJwt(Arc::new(key));
        Ok(oauth)
    }

    /// The token is obtained for an assertion (the JWT bearer grant, RFC 7523): `assertion`
    /// makes it (a workload identity token, or an identity provider's ID-JAG through
    /// [`exchange_id_token`]). The client authenticates with its secret when it has one.
    pub fn jwt_bearer<F, Fut>(
        client_id: impl Into<String>,
        client_secret: Option<String>,
        assertion: F,
    ) -> Self
    where
        F: Fn(AssertionRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, String>> + Send + 'static,
    {
        let mut oauth = OAuth::new().client_id(client_id, client_secret);
        oauth.grant = Grant::JwtBearer(Arc::new(move |request| Box::pin(assertion(request))));
        oauth
    }

    /// Binds the tokens to a key of this client (DPoP, RFC 9449): every request carries a
    /// fresh proof signed with it, so a stolen token is useless without the key.
    pub fn dpop(mut self) -> Self {
        self.dpop = true;
        self
    }

    /// The name shown to the person signing in (dynamic registration).
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// A client registered beforehand with the authorization server.
    pub fn client_id(
        mut self,
        client_id: impl Into<String>,
        client_secret: Option<String>,
    ) -> Self {
        self.registration = Registration::Given {
            client_id: client_id.into(),
            client_secret,
        };
        self
    }

    /// The HTTPS URL of this client's metadata document: used as the client ID where the
    /// authorization server supports client ID metadata documents, instead of registering.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.metadata_url = Some(url.into());
        self
    }

    /// The scopes to ask for, instead of those the server names.
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// The port of the local redirect listener (`0`, the default, picks a free one; a
    /// pre-registered client usually needs a fixed one).
    pub fn redirect_port(mut self, port: u16) -> Self {
        self.redirect_port = port;
        self
    }

    /// Shows the authorization URL with `open` (e.g. starts the person's browser on it)
    /// instead of printing it on standard error; the redirect still comes back to the local
    /// listener.
    pub fn open_with<F>(mut self, open: F) -> Self
    where
        F: Fn(&str) + Send + Sync + 'static,
    {
        self.open = Some(Arc::new(open));
        self
    }

    /// Replaces the user agent's step: `step(authorization_url, redirect_uri)` has the
    /// person (or an automated agent) sign in, and returns the URL the authorization server
    /// redirected to, with its `code` and `state`. `redirect_uri` is what the client
    /// registers; the default is the local listener's.
    pub fn on_authorize<F, Fut>(mut self, redirect_uri: impl Into<String>, step: F) -> Self
    where
        F: Fn(String, String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, String>> + Send + 'static,
    {
        self.redirect_uri = Some(redirect_uri.into());
        self.authorize = Some(Arc::new(move |url, redirect| Box::pin(step(url, redirect))));
        self
    }

    pub(crate) fn into_flow(self) -> Flow {
        let dpop = self.dpop.then(Dpop::new);
        Flow {
            settings: self,
            state: Mutex::new(FlowState::default()),
            dpop,
        }
    }
}

#[derive(Clone, Debug, Default)]
struct Token {
    access: String,
    refresh: Option<String>,
    expires: Option<Instant>,
    /// Bound to the DPoP key (`token_type: DPoP`).
    dpop: bool,
}

/// What the flow learnt about the authorization server.
#[derive(Clone, Debug, Default)]
struct ServerInfo {
    issuer: Option<String>,
    authorization_endpoint: String,
    token_endpoint: String,
    registration_endpoint: Option<String>,
    auth_methods: Vec<String>,
    pkce_methods: Option<Vec<String>>,
    scopes_supported: Option<Vec<String>>,
    iss_parameter: bool,
    metadata_documents: bool,
}

#[derive(Clone, Debug)]
struct Client {
    id: String,
    secret: Option<String>,
    method: String,
    redirect_uri: String,
    /// The issuer it was registered with: a client of another server registers again.
    issuer: String,
}

#[derive(Default)]
struct FlowState {
    token: Option<Token>,
    server: Option<ServerInfo>,
    /// The server's canonical URI, the `resource` of every request.
    resource: Option<String>,
    client: Option<Client>,
    /// The scopes the current token was asked with.
    scopes: Option<String>,
    /// How often each set of scopes was asked for after a 403.
    attempts: HashMap<String, usize>,
    /// Where the URLs the server supplied may lead.
    reach: Option<Reach>,
    /// When a person was last asked to sign in, within `SIGN_IN_WINDOW`.
    sign_ins: Vec<Instant>,
}

pub(crate) struct Flow {
    settings: OAuth,
    state: Mutex<FlowState>,
    dpop: Option<Dpop>,
}

/// The parameters of a `Bearer` challenge.
#[derive(Debug, Default, PartialEq)]
struct Challenge {
    resource_metadata: Option<String>,
    scope: Option<String>,
    error: Option<String>,
}

fn parse_challenge(header: &str) -> Challenge {
    let mut challenge = Challenge::default();
    let lower = header.to_ascii_lowercase();
    let Some((start, scheme)) = ["bearer", "dpop"]
        .iter()
        .filter_map(|scheme| lower.find(scheme).map(|at| (at, scheme.len())))
        .min()
    else {
        return challenge;
    };
    let mut rest = &header[start + scheme..];
    loop {
        rest = rest.trim_start_matches([' ', ',', '\t']);
        let Some(eq) = rest.find('=') else { break };
        let key = rest[..eq].trim().to_ascii_lowercase();
        rest = rest[eq + 1..].trim_start();
        let value;
        if let Some(quoted) = rest.strip_prefix('"') {
            let mut out = String::new();
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, next)) = chars.next() {
                            out.push(next);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => out.push(c),
                }
            }
            value = out;
            rest = &quoted[end.min(quoted.len())..];
        } else {
            let end = rest.find([',', ' ']).unwrap_or(rest.len());
            value = rest[..end].to_owned();
            rest = &rest[end..];
        }
        match key.as_str() {
            "resource_metadata" => challenge.resource_metadata = Some(value),
            "scope" => challenge.scope = Some(value),
            "error" => challenge.error = Some(value),
            _ => {}
        }
    }
    challenge
}

impl Authorize for Flow {
    fn headers<'a>(
        &'a self,
        method: &'a str,
        url: &'a Uri,
    ) -> BoxFuture<'a, Result<Vec<(String, String)>, CallError>> {
        Box::pin(async move {
            let mut state = self.state.lock().await;
            let Some(token) = state.token.clone() else {
                return Ok(Vec::new());
            };
            let expiring = token
                .expires
                .is_some_and(|at| at.saturating_duration_since(Instant::now()) < EXPIRY_MARGIN);
            let token =
                if expiring && token.refresh.is_some() && self.refresh(&mut state).await.is_ok() {
                    state.token.clone().unwrap_or(token)
                } else {
                    token
                };
            match (&self.dpop, token.dpop) {
                (Some(dpop), true) => {
                    let ath = URL_SAFE_NO_PAD.encode(Sha256::digest(token.access.as_bytes()));
                    let nonce = dpop.resource_nonce.lock().await.clone();
                    let proof = dpop.proof(method, &url.to_string(), Some(&ath), nonce.as_deref());
                    Ok(vec![
                        ("Authorization".into(), format!("DPoP {}", token.access)),
                        ("DPoP".into(), proof),
                    ])
                }
                _ => Ok(vec![(
                    "Authorization".into(),
                    format!("Bearer {}", token.access),
                )]),
            }
        })
    }

    fn challenged<'a>(
        &'a self,
        refusal: Refusal<'a>,
        server: &'a Uri,
        attempt: usize,
    ) -> BoxFuture<'a, Result<bool, CallError>> {
        Box::pin(async move {
            let challenge = parse_challenge(refusal.challenge);
            // A resource server asking for a fresh DPoP nonce: the same token, a new proof.
            if challenge.error.as_deref() == Some("use_dpop_nonce")
                && let (Some(dpop), Some(nonce)) = (&self.dpop, refusal.dpop_nonce)
                && attempt < 2
            {
                *dpop.resource_nonce.lock().await = Some(nonce.to_owned());
                return Ok(true);
            }
            let mut state = self.state.lock().await;
            // Another request renewed the token since this one was sent with the old one:
            // the new one is tried before anyone is asked to sign in again.
            if let (Some(sent), Some(token)) = (refusal.authorization, &state.token)
                && sent
                    .split_once(' ')
                    .is_some_and(|(_, sent)| sent != token.access)
            {
                return Ok(true);
            }
            if refusal.status == 403 {
                if challenge.error.as_deref() != Some("insufficient_scope") {
                    return Ok(false);
                }
                let scopes = challenge.scope.clone().unwrap_or_default();
                let tries = state.attempts.entry(scopes.clone()).or_default();
                *tries += 1;
                if *tries > MAX_SCOPE_ATTEMPTS {
                    return Ok(false);
                }
                let wanted = union(state.scopes.as_deref(), challenge.scope.as_deref());
                self.sign_in(&mut state, (server, refusal.peer), &challenge, wanted)
                    .await
                    .map_err(printable_error)?;
                return Ok(true);
            }
            // 401: a token that can be refreshed is, first; otherwise (or when the refreshed
            // one is refused too) the client signs in again, once per request. A grant
            // without a person is not tried twice for one request.
            if attempt == 0
                && state.token.as_ref().is_some_and(|t| t.refresh.is_some())
                && self.refresh(&mut state).await.is_ok()
            {
                return Ok(true);
            }
            let limit = if matches!(self.settings.grant, Grant::Code) {
                1
            } else {
                0
            };
            if attempt > limit {
                return Ok(false);
            }
            let scopes = self.choose_scopes(&state, &challenge);
            self.sign_in(&mut state, (server, refusal.peer), &challenge, scopes)
                .await
                .map_err(printable_error)?;
            Ok(true)
        })
    }
}

/// The scopes of `a` and of `b`, each once, in order.
fn union(a: Option<&str>, b: Option<&str>) -> Option<String> {
    let mut all: Vec<&str> = Vec::new();
    for scope in a.into_iter().chain(b).flat_map(str::split_whitespace) {
        if !all.contains(&scope) {
            all.push(scope);
        }
    }
    (!all.is_empty()).then(|| all.join(" "))
}

impl Flow {
    fn choose_scopes(&self, state: &FlowState, challenge: &Challenge) -> Option<String> {
        if let Some(scopes) = &self.settings.scopes {
            return Some(scopes.join(" "));
        }
        if let Some(scope) = &challenge.scope {
            return Some(scope.clone());
        }
        state.scopes.clone()
    }

    /// Discovery (when not done yet, or the challenge names other metadata), registration,
    /// and the authorization code flow for `scopes`.
    async fn sign_in(
        &self,
        state: &mut FlowState,
        (server, peer): (&Uri, Option<std::net::IpAddr>),
        challenge: &Challenge,
        scopes: Option<String>,
    ) -> Result<(), CallError> {
        if matches!(self.settings.grant, Grant::Code) {
            let now = Instant::now();
            state
                .sign_ins
                .retain(|at| now.saturating_duration_since(*at) < SIGN_IN_WINDOW);
            if state.sign_ins.len() >= MAX_SIGN_INS {
                return Err(CallError::Auth(format!(
                    "the server asked for a sign-in more than {MAX_SIGN_INS} times in {} minutes",
                    SIGN_IN_WINDOW.as_secs() / 60
                )));
            }
        }
        let reach = Reach::of_server(server, peer).await;
        let http = outbound::client_within(&reach).map_err(CallError::Auth)?;
        let (resource, metadata_scopes, info) = discover(&http, &reach, server, challenge).await?;
        if !matches!(self.settings.grant, Grant::Code) {
            // No person signs in: the scopes are those the server asked for, if any.
            return self
                .direct(&http, &reach, state, info, resource, scopes)
                .await;
        }
        // MCP 2025-11-25: a client must refuse an authorization server that does not say it
        // supports PKCE with S256.
        if !info
            .pkce_methods
            .as_ref()
            .is_some_and(|methods| methods.iter().any(|m| m == "S256"))
        {
            return Err(CallError::Auth(
                "the authorization server does not say it supports PKCE with S256 (`code_challenge_methods_supported`)".into(),
            ));
        }
        let mut scopes = scopes.or(metadata_scopes);
        if let Some(supported) = &info.scopes_supported
            && supported.iter().any(|s| s == "offline_access")
            && !scopes
                .as_deref()
                .is_some_and(|s| s.split_whitespace().any(|s| s == "offline_access"))
            && self.settings.scopes.is_none()
        {
            scopes = union(scopes.as_deref(), Some("offline_access"));
        }
        let issuer = info.issuer.clone().unwrap_or_default();
        let mut redirect = self.redirect_uri().await?;
        let client = match state.client.clone() {
            Some(client) if client.issuer == issuer && client.redirect_uri == redirect.uri => {
                client
            }
            _ => {
                self.register(&http, &reach, &info, &redirect.uri, &issuer)
                    .await?
            }
        };
        let verifier = random_text(32);
        let challenge_text = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        let csrf = random_text(16);
        let mut query = vec![
            ("response_type", "code".to_owned()),
            ("client_id", client.id.clone()),
            ("redirect_uri", redirect.uri.clone()),
            ("code_challenge", challenge_text),
            ("code_challenge_method", "S256".to_owned()),
            ("state", csrf.clone()),
            ("resource", resource.clone()),
        ];
        if let Some(scopes) = &scopes {
            query.push(("scope", scopes.clone()));
        }
        let separator = if info.authorization_endpoint.contains('?') {
            '&'
        } else {
            '?'
        };
        let url = format!("{}{separator}{}", info.authorization_endpoint, form(&query));
        // A sign-in counts against the cap once a person (or the step standing in for one)
        // is asked, not when discovery or registration failed before.
        state.sign_ins.push(Instant::now());
        // The request's timeout does not run while a person signs in.
        let person = super::auth::PersonStep::begin();
        let (callback, browser) = match &self.settings.authorize {
            Some(step) => {
                let step = SIGN_IN_REACH.scope(reach.clone(), step(url, redirect.uri.clone()));
                let callback = tokio::time::timeout(SIGN_IN_DEADLINE, step)
                    .await
                    .map_err(|_| CallError::Auth("nobody signed in in time".into()))?
                    .map_err(CallError::Auth)?;
                (callback, None)
            }
            None => {
                let (callback, browser) = redirect
                    .wait(&url, &csrf, self.settings.open.as_ref())
                    .await?;
                (callback, Some(browser))
            }
        };
        drop(person);
        let exchanged = async {
            let answer = query_of(&callback);
            if let Some(error) = answer.get("error") {
                let description = answer
                    .get("error_description")
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default();
                return Err(CallError::Auth(format!(
                    "the authorization server refused: {error}{description}"
                )));
            }
            if answer.get("state") != Some(&csrf) {
                return Err(CallError::Auth(
                    "the redirect's `state` is not the one sent (a forged redirect?)".into(),
                ));
            }
            // RFC 9207: an authorization server that says it sends `iss` must send its own.
            match (answer.get("iss"), info.iss_parameter) {
                (Some(iss), _) if info.issuer.as_deref().is_some_and(|i| !same_issuer(i, iss)) => {
                    return Err(CallError::Auth(format!(
                        "the redirect's `iss` ({iss}) is not the authorization server's issuer"
                    )));
                }
                (None, true) => {
                    return Err(CallError::Auth(
                        "the authorization server promised `iss` in its redirect, which has none"
                            .into(),
                    ));
                }
                _ => {}
            }
            let code = answer
                .get("code")
                .ok_or_else(|| CallError::Auth("the redirect carries no `code`".into()))?;
            let fields = vec![
                ("grant_type", "authorization_code".to_owned()),
                ("code", code.clone()),
                ("redirect_uri", redirect.uri.clone()),
                ("code_verifier", verifier),
                ("resource", resource.clone()),
            ];
            token_request(&http, &reach, &info, &client, fields, self.dpop.as_ref()).await
        }
        .await;
        if let Some(browser) = browser {
            answer_browser(browser, exchanged.as_ref().err()).await;
        }
        state.token = Some(exchanged?);
        state.scopes = scopes;
        state.resource = Some(resource);
        state.server = Some(info);
        state.client = Some(client);
        state.reach = Some(reach);
        Ok(())
    }

    /// A grant without a person: client credentials (with a secret or a signed JWT), or
    /// an assertion exchanged for the token.
    async fn direct(
        &self,
        http: &outbound::Client,
        reach: &Reach,
        state: &mut FlowState,
        info: ServerInfo,
        resource: String,
        scopes: Option<String>,
    ) -> Result<(), CallError> {
        let issuer = info.issuer.clone().unwrap_or_default();
        let Registration::Given {
            client_id,
            client_secret,
        } = &self.settings.registration
        else {
            return Err(CallError::Auth("this grant needs a client ID".into()));
        };
        let mut client = Client {
            id: client_id.clone(),
            secret: client_secret.clone(),
            method: "none".into(),
            redirect_uri: String::new(),
            issuer: issuer.clone(),
        };
        let supports =
            |m: &str| info.auth_methods.is_empty() || info.auth_methods.iter().any(|s| s == m);
        if client.secret.is_some() {
            client.method = if supports("client_secret_basic") {
                "client_secret_basic".into()
            } else {
                "client_secret_post".into()
            };
        }
        let mut fields = Vec::new();
        match &self.settings.grant {
            Grant::Code => unreachable!("the code flow signs in"),
            Grant::ClientCredentials => {
                fields.push(("grant_type", "client_credentials".to_owned()));
            }
            Grant::PrivateKeyJwt(key) => {
                fields.push(("grant_type", "client_credentials".to_owned()));
                fields.push((
                    "client_assertion_type",
                    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_owned(),
                ));
                let now = unix_now();
                let claims = json!({
                    "iss": client.id, "sub": client.id, "aud": issuer,
                    "iat": now, "exp": now + 300, "jti": random_text(16),
                });
                fields.push((
                    "client_assertion",
                    sign_es256(key, &json!({ "alg": "ES256", "typ": "JWT" }), &claims),
                ));
                // The assertion authenticates the client: no secret, no Basic.
                client.method = "private_key_jwt".into();
            }
            Grant::JwtBearer(assertion) => {
                let request = AssertionRequest {
                    issuer: issuer.clone(),
                    resource: Some(resource.clone()),
                };
                let assertion = assertion(request).await.map_err(CallError::Auth)?;
                fields.push((
                    "grant_type",
                    "urn:ietf:params:oauth:grant-type:jwt-bearer".to_owned(),
                ));
                fields.push(("assertion", assertion));
            }
        }
        if let Some(scopes) = &scopes {
            fields.push(("scope", scopes.clone()));
        }
        fields.push(("resource", resource.clone()));
        let token = token_request(http, reach, &info, &client, fields, self.dpop.as_ref()).await?;
        state.token = Some(token);
        state.scopes = scopes;
        state.resource = Some(resource);
        state.server = Some(info);
        state.client = Some(client);
        state.reach = Some(reach.clone());
        Ok(())
    }

    async fn refresh(&self, state: &mut FlowState) -> Result<(), CallError> {
        let (Some(token), Some(info), Some(client)) = (
            state.token.clone(),
            state.server.clone(),
            state.client.clone(),
        ) else {
            return Err(CallError::Auth("nothing to refresh".into()));
        };
        let refresh = token
            .refresh
            .clone()
            .ok_or_else(|| CallError::Auth("no refresh token".into()))?;
        let mut fields = vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", refresh.clone()),
        ];
        if let Some(resource) = &state.resource {
            fields.push(("resource", resource.clone()));
        }
        let reach = state.reach.clone().unwrap_or_else(Reach::loopback);
        let http = outbound::client_within(&reach).map_err(CallError::Auth)?;
        match token_request(&http, &reach, &info, &client, fields, self.dpop.as_ref()).await {
            Ok(mut fresh) => {
                // A server that does not rotate refresh tokens keeps the old one valid.
                fresh.refresh = fresh.refresh.or(Some(refresh));
                state.token = Some(fresh);
                Ok(())
            }
            Err(error) => {
                state.token = None;
                Err(error)
            }
        }
    }

    async fn redirect_uri(&self) -> Result<Redirect, CallError> {
        if let Some(uri) = &self.settings.redirect_uri {
            return Ok(Redirect {
                uri: uri.clone(),
                listener: None,
            });
        }
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", self.settings.redirect_port))
            .await
            .map_err(|e| {
                CallError::Auth(format!(
                    "the local redirect listener could not bind 127.0.0.1:{}: {e}",
                    self.settings.redirect_port
                ))
            })?;
        let port = listener
            .local_addr()
            .map_err(|e| CallError::Auth(e.to_string()))?
            .port();
        Ok(Redirect {
            uri: format!("http://127.0.0.1:{port}/callback"),
            listener: Some(listener),
        })
    }

    async fn register(
        &self,
        http: &outbound::Client,
        reach: &Reach,
        info: &ServerInfo,
        redirect_uri: &str,
        issuer: &str,
    ) -> Result<Client, CallError> {
        let choose = |secret: bool| -> String {
            let supported =
                |m: &str| info.auth_methods.is_empty() || info.auth_methods.iter().any(|s| s == m);
            if secret && supported("client_secret_basic") {
                "client_secret_basic".into()
            } else if secret && supported("client_secret_post") {
                "client_secret_post".into()
            } else {
                "none".into()
            }
        };
        if let Registration::Given {
            client_id,
            client_secret,
        } = &self.settings.registration
        {
            return Ok(Client {
                id: client_id.clone(),
                secret: client_secret.clone(),
                method: choose(client_secret.is_some()),
                redirect_uri: redirect_uri.to_owned(),
                issuer: issuer.to_owned(),
            });
        }
        if let Some(url) = &self.settings.metadata_url
            && info.metadata_documents
        {
            return Ok(Client {
                id: url.clone(),
                secret: None,
                method: "none".into(),
                redirect_uri: redirect_uri.to_owned(),
                issuer: issuer.to_owned(),
            });
        }
        let Some(endpoint) = &info.registration_endpoint else {
            return Err(CallError::Auth(
                "the authorization server offers no dynamic registration: give a client ID (`OAuth::client_id`)"
                    .into(),
            ));
        };
        let method =
            if info.auth_methods.is_empty() || info.auth_methods.iter().any(|m| m == "none") {
                "none"
            } else if info.auth_methods.iter().any(|m| m == "client_secret_basic") {
                "client_secret_basic"
            } else {
                "client_secret_post"
            };
        let body = json!({
            "client_name": self.settings.client_name,
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
            "application_type": "native",
        });
        let answer = exchange(
            http,
            reach,
            Method::POST,
            endpoint,
            Some(("application/json", body.to_string())),
            &[],
        )
        .await?;
        if !answer.0.is_success() {
            return Err(CallError::Auth(format!(
                "dynamic registration was refused ({}): {}",
                answer.0, answer.1
            )));
        }
        let registered: Value = serde_json::from_str(&answer.1)
            .map_err(|e| CallError::Auth(format!("the registration answer is not JSON: {e}")))?;
        let id = registered["client_id"]
            .as_str()
            .ok_or_else(|| CallError::Auth("the registration answer has no client_id".into()))?;
        let secret = registered["client_secret"].as_str().map(str::to_owned);
        let method = registered["token_endpoint_auth_method"]
            .as_str()
            .map_or_else(|| choose(secret.is_some()), str::to_owned);
        Ok(Client {
            id: id.to_owned(),
            secret,
            method,
            redirect_uri: redirect_uri.to_owned(),
            issuer: issuer.to_owned(),
        })
    }
}

/// Where the redirect comes back: a URI, and the local listener behind it.
struct Redirect {
    uri: String,
    listener: Option<tokio::net::TcpListener>,
}

impl Redirect {
    /// Shows the authorization URL and waits for the browser's redirect to the listener
    /// with the `state` sent; returns its URL and the connection to answer the browser on.
    async fn wait(
        &mut self,
        url: &str,
        state: &str,
        open: Option<&Opener>,
    ) -> Result<(String, tokio::net::TcpStream), CallError> {
        let Some(listener) = self.listener.take() else {
            return Err(CallError::Auth("no redirect listener".into()));
        };
        match open {
            Some(open) => open(url),
            None => eprintln!(
                "To authorize this client, open this URL in a browser:\n\n  {}\n",
                printable(url)
            ),
        }
        // Each connection is read on its own, so that one left idle (or slow) does not
        // keep the browser's out.
        let (found, mut callbacks) = tokio::sync::mpsc::channel(1);
        let accept = async {
            loop {
                let (socket, _) = listener
                    .accept()
                    .await
                    .map_err(|e| CallError::Auth(format!("the redirect listener failed: {e}")))?;
                let found = found.clone();
                let state = state.to_owned();
                tokio::spawn(async move {
                    if let Some(callback) = read_callback(socket, &state).await {
                        let _ = found.send(callback).await;
                    }
                });
            }
        };
        let wait = async {
            tokio::select! {
                failed = accept => failed,
                Some((target, socket)) = callbacks.recv() => Ok((
                    format!("{}{target}", self.uri.trim_end_matches("/callback")),
                    socket,
                )),
            }
        };
        tokio::time::timeout(SIGN_IN_DEADLINE, wait)
            .await
            .map_err(|_| CallError::Auth("nobody signed in in time".into()))?
    }
}

/// Reads one request to the redirect listener: the target of a `/callback` with the
/// expected `state`, and its connection; anything else is answered and dropped.
async fn read_callback(
    mut socket: tokio::net::TcpStream,
    state: &str,
) -> Option<(String, tokio::net::TcpStream)> {
    let read = async {
        let mut request = Vec::new();
        let mut buffer = [0u8; 2048];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") && request.len() < 16 * 1024 {
            match socket.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => request.extend_from_slice(&buffer[..n]),
            }
        }
        request
    };
    let request = tokio::time::timeout(CALLBACK_READ_DEADLINE, read)
        .await
        .ok()?;
    let text = String::from_utf8_lossy(&request);
    let target = text
        .lines()
        .next()
        .and_then(|line| line.strip_prefix("GET "))
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_default()
        .to_owned();
    if !target.starts_with("/callback") {
        let _ = socket
            .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            .await;
        return None;
    }
    if query_of(&target).get("state").map(String::as_str) != Some(state) {
        // Not the answer to this sign-in (a forged or stale redirect): the real one may
        // still come.
        let page = page(
            "400 Bad Request",
            "Not signed in",
            "This is not the answer to the sign-in this client is waiting for.",
        );
        let _ = socket.write_all(page.as_bytes()).await;
        return None;
    }
    Some((target, socket))
}

/// Tells the person in the browser how the sign-in ended, once it has.
async fn answer_browser(mut socket: tokio::net::TcpStream, failure: Option<&CallError>) {
    let page = match failure {
        None => page(
            "200 OK",
            "Signed in",
            "Signed in. You may close this window.",
        ),
        Some(error) => page(
            "400 Bad Request",
            "Not signed in",
            &format!("The sign-in failed: {}", html_escape(&error.to_string())),
        ),
    };
    let _ = socket.write_all(page.as_bytes()).await;
}

/// An HTTP answer carrying a small HTML page.
fn page(status: &str, title: &str, text: &str) -> String {
    let body = format!("<!doctype html><title>{title}</title><p>{text}</p>");
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// An error whose text (which quotes what the servers sent) is safe to print.
fn printable_error(error: CallError) -> CallError {
    match error {
        CallError::Auth(message) => CallError::Auth(printable(&message)),
        other => other,
    }
}

/// `url` safe to print on a terminal: control characters (the escapes that rewrite lines,
/// hide text or make links that point elsewhere than they read) percent-encoded.
fn printable(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    for c in url.chars() {
        if c.is_control() {
            let mut bytes = [0u8; 4];
            for byte in c.encode_utf8(&mut bytes).bytes() {
                out.push_str(&format!("%{byte:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Finds the server's resource metadata and its authorization server's: the resource to
/// name, the scopes the metadata offers, and the authorization server. Every URL found is
/// held to `reach`.
async fn discover(
    http: &outbound::Client,
    reach: &Reach,
    server: &Uri,
    challenge: &Challenge,
) -> Result<(String, Option<String>, ServerInfo), CallError> {
    let origin = origin_of(server);
    let path = server.path().trim_end_matches('/');
    let canonical = format!("{origin}{path}");
    // Each candidate with the resources it may describe: RFC 9728 §3.3 wants the metadata's
    // `resource` identical to the one its URL was built from — the server's own URL, or
    // the origin for the metadata at the origin's root.
    let mut candidates: Vec<(String, Vec<&str>)> = Vec::new();
    if let Some(url) = &challenge.resource_metadata {
        candidates.push((url.clone(), vec![&canonical]));
    } else {
        if !path.is_empty() {
            candidates.push((
                format!("{origin}/.well-known/oauth-protected-resource{path}"),
                vec![&canonical],
            ));
        }
        candidates.push((
            format!("{origin}/.well-known/oauth-protected-resource"),
            vec![&canonical, &origin],
        ));
    }
    let mut resource_metadata = None;
    for (url, resources) in &candidates {
        if let Some(document) = fetch_json(http, reach, url).await? {
            resource_metadata = Some((document, resources));
            break;
        }
    }
    let Some((metadata, resources)) = resource_metadata else {
        // A server of 2025-03-26: its own origin is the authorization server, with the
        // default endpoints when it publishes no metadata.
        let info = match authorization_server(http, reach, &origin, Issuer::OnOrigin).await? {
            Some(info) => info,
            None => ServerInfo {
                issuer: Some(origin.clone()),
                authorization_endpoint: format!("{origin}/authorize"),
                token_endpoint: format!("{origin}/token"),
                registration_endpoint: Some(format!("{origin}/register")),
                // 2025-03-26 has every server support PKCE: without metadata, nothing says
                // otherwise.
                pkce_methods: Some(vec!["S256".into()]),
                ..ServerInfo::default()
            },
        };
        return Ok((canonical, None, info));
    };
    let resource = metadata["resource"].as_str().ok_or_else(|| {
        CallError::Auth("the protected-resource metadata names no `resource`".into())
    })?;
    if !resources
        .iter()
        .any(|r| resource.trim_end_matches('/') == r.trim_end_matches('/'))
    {
        return Err(CallError::Auth(format!(
            "the protected-resource metadata is for {resource}, not for {canonical}"
        )));
    }
    let resource = resource.to_owned();
    let issuer = metadata["authorization_servers"][0]
        .as_str()
        .ok_or_else(|| {
            CallError::Auth("the protected-resource metadata names no authorization server".into())
        })?
        .to_owned();
    let info = authorization_server(http, reach, &issuer, Issuer::Exactly)
        .await?
        .ok_or_else(|| {
            CallError::Auth(format!(
                "the authorization server {issuer} publishes no metadata"
            ))
        })?;
    let scopes = metadata["scopes_supported"].as_array().and_then(|scopes| {
        let scopes: Vec<&str> = scopes.iter().filter_map(Value::as_str).collect();
        (!scopes.is_empty()).then(|| scopes.join(" "))
    });
    Ok((resource, scopes, info))
}

/// The authorization server's metadata, from the locations RFC 8414 and OpenID Connect
/// Discovery define, in the order the MCP specification gives; `None` when none answers.
/// Its `issuer` must be `issuer` (RFC 8414 §3.3) as `rule` says, and its endpoints within
/// `reach`.
async fn authorization_server(
    http: &outbound::Client,
    reach: &Reach,
    issuer: &str,
    rule: Issuer,
) -> Result<Option<ServerInfo>, CallError> {
    reach.checked(issuer).map_err(CallError::Auth)?;
    let candidates = outbound::metadata_candidates(issuer).map_err(CallError::Auth)?;
    for url in candidates {
        let Some(document) = fetch_json(http, reach, &url).await? else {
            continue;
        };
        let named = document["issuer"].as_str().unwrap_or_default();
        let accepted = match rule {
            Issuer::Exactly => same_issuer(named, issuer),
            Issuer::OnOrigin => {
                same_issuer(named, issuer)
                    || named
                        .strip_prefix(issuer)
                        .is_some_and(|path| path.starts_with('/'))
            }
        };
        if !accepted {
            return Err(CallError::Auth(format!(
                "the metadata at {url} is for issuer {named}, not {issuer}"
            )));
        }
        let strings = |key: &str| -> Option<Vec<String>> {
            document[key].as_array().map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
        };
        // The authorization endpoint goes to the browser, the others to this client: each
        // must be https (http to loopback only) and within reach — no `javascript:` or
        // `file:` URL handed to a browser opener.
        let endpoint = |key: &str| -> Result<Option<String>, CallError> {
            let Some(value) = document[key].as_str() else {
                return Ok(None);
            };
            reach
                .checked(value)
                .map_err(|e| CallError::Auth(format!("the metadata's {key}: {e}")))?;
            Ok(Some(value.to_owned()))
        };
        let required = |key: &str| -> Result<String, CallError> {
            endpoint(key)?
                .ok_or_else(|| CallError::Auth(format!("the metadata at {url} has no {key}")))
        };
        return Ok(Some(ServerInfo {
            issuer: Some(named.to_owned()),
            authorization_endpoint: required("authorization_endpoint")?,
            token_endpoint: required("token_endpoint")?,
            registration_endpoint: endpoint("registration_endpoint")?,
            auth_methods: strings("token_endpoint_auth_methods_supported").unwrap_or_default(),
            pkce_methods: strings("code_challenge_methods_supported"),
            scopes_supported: strings("scopes_supported"),
            iss_parameter: document["authorization_response_iss_parameter_supported"] == true,
            metadata_documents: document["client_id_metadata_document_supported"] == true,
        }));
    }
    Ok(None)
}

/// How the `issuer` of an authorization server's metadata must match the one it was looked
/// up for.
#[derive(Clone, Copy)]
enum Issuer {
    /// Identical (RFC 8414 §3.3).
    Exactly,
    /// That origin, or an issuer under it: a 2025-03-26 server's origin is its authorization
    /// server, and such servers (the official conformance suite's among them) publish at the
    /// origin the metadata of an issuer with a path, such as `/oauth`. Another origin's
    /// issuer is refused, so that the server cannot pass another authorization server off
    /// as its own.
    OnOrigin,
}

/// Issuers compared as RFC 8414 and RFC 9207 ask: as strings, exactly (a trailing slash
/// makes another issuer).
fn same_issuer(a: &str, b: &str) -> bool {
    a == b
}

async fn token_request(
    http: &outbound::Client,
    reach: &Reach,
    info: &ServerInfo,
    client: &Client,
    mut fields: Vec<(&'static str, String)>,
    dpop: Option<&Dpop>,
) -> Result<Token, CallError> {
    let mut basic = None;
    match (client.method.as_str(), &client.secret) {
        ("client_secret_basic", Some(secret)) => {
            // RFC 6749 §2.3.1: both halves form-encoded before they are joined.
            let pair = format!(
                "{}:{}",
                outbound::form_encode(&client.id),
                outbound::form_encode(secret)
            );
            basic = Some(format!("Basic {}", STANDARD.encode(pair)));
        }
        ("client_secret_post", Some(secret)) => {
            fields.push(("client_id", client.id.clone()));
            fields.push(("client_secret", secret.clone()));
        }
        _ => fields.push(("client_id", client.id.clone())),
    }
    let body = form(&fields);
    let mut nonce = match dpop {
        Some(dpop) => dpop.server_nonce.lock().await.clone(),
        None => None,
    };
    let mut asked_nonce = false;
    let (status, answer) = loop {
        let mut headers = Vec::new();
        if let Some(auth) = &basic {
            headers.push(("authorization", auth.clone()));
        }
        if let Some(dpop) = dpop {
            headers.push((
                "dpop",
                dpop.proof("POST", &info.token_endpoint, None, nonce.as_deref()),
            ));
        }
        let (status, body, server_nonce) = exchange(
            http,
            reach,
            Method::POST,
            &info.token_endpoint,
            Some(("application/x-www-form-urlencoded", body.clone())),
            &headers,
        )
        .await?;
        let answer: Value = serde_json::from_str(&body).map_err(|e| {
            CallError::Auth(format!(
                "the token endpoint answered {status} with no JSON: {e}"
            ))
        })?;
        // RFC 9449 §8: the authorization server wants a nonce in the proof.
        if let (Some(dpop), Some(fresh)) = (dpop, server_nonce) {
            *dpop.server_nonce.lock().await = Some(fresh.clone());
            if answer["error"] == "use_dpop_nonce" && !asked_nonce {
                asked_nonce = true;
                nonce = Some(fresh);
                continue;
            }
        }
        break (status, answer);
    };
    if !status.is_success() {
        return Err(CallError::Auth(format!(
            "the token endpoint refused ({status}): {}",
            answer["error"].as_str().unwrap_or("no error code")
        )));
    }
    let access = answer["access_token"]
        .as_str()
        .ok_or_else(|| CallError::Auth("the token answer has no access_token".into()))?;
    let kind = answer["token_type"].as_str().unwrap_or_default();
    let bound = kind.eq_ignore_ascii_case("dpop") && dpop.is_some();
    if !kind.eq_ignore_ascii_case("bearer") && !bound {
        return Err(CallError::Auth(format!(
            "the token endpoint issued a token of type {kind:?}, which this client cannot use"
        )));
    }
    Ok(Token {
        access: access.to_owned(),
        refresh: answer["refresh_token"].as_str().map(str::to_owned),
        // A lifetime past what an `Instant` can hold is no expiry at all.
        expires: answer["expires_in"]
            .as_u64()
            .and_then(|s| Instant::now().checked_add(Duration::from_secs(s))),
        dpop: bound,
    })
}

/// A JSON document at `url`; `None` when the server has none there (4xx).
async fn fetch_json(
    http: &outbound::Client,
    reach: &Reach,
    url: &str,
) -> Result<Option<Value>, CallError> {
    let (status, body, _) = exchange(http, reach, Method::GET, url, None, &[]).await?;
    if status.is_client_error() {
        return Ok(None);
    }
    if !status.is_success() {
        return Err(CallError::Auth(format!("{url} answered {status}")));
    }
    serde_json::from_str(&body)
        .map(Some)
        .map_err(|e| CallError::Auth(format!("{url} is not JSON: {e}")))
}

/// One request to an authorization server (or for a metadata document), through the
/// runtime's bounded exchange: HTTPS, or plain HTTP to loopback only; to addresses within
/// `reach`; bounded in time and size; redirects not followed. Returns the status, the body
/// and any `DPoP-Nonce`.
async fn exchange(
    http: &outbound::Client,
    reach: &Reach,
    method: Method,
    url: &str,
    body: Option<(&str, String)>,
    headers: &[(&str, String)],
) -> Result<(hyper::StatusCode, String, Option<String>), CallError> {
    let uri = reach.checked(url).map_err(CallError::Auth)?;
    reach.resolved(&uri).await.map_err(CallError::Auth)?;
    let mut request = Request::builder()
        .method(method)
        .uri(uri)
        .header(ACCEPT, "application/json");
    for (name, value) in headers {
        request = request.header(*name, value.as_str());
    }
    let request = match body {
        Some((kind, body)) => request
            .header(CONTENT_TYPE, kind)
            .body(Full::new(Bytes::from(body))),
        None => request.body(Full::new(Bytes::new())),
    }
    .map_err(|e| CallError::Auth(e.to_string()))?;
    let answer = outbound::exchange(http, url, request, EXCHANGE_DEADLINE, MAX_ANSWER)
        .await
        .map_err(CallError::Auth)?;
    // The connector resolves the name again, and refuses it out of `reach` before it
    // connects (DNS rebinding); the address it went to is looked at once more.
    if let Some(remote) = answer.remote
        && !reach.allows(remote.ip())
    {
        return Err(CallError::Auth(reach.refusal(url, remote.ip())));
    }
    let nonce = answer
        .headers
        .get("dpop-nonce")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = String::from_utf8_lossy(&answer.body).into_owned();
    Ok((answer.status, body, nonce))
}

/// Follows nothing: asks `url` as a browser would and returns where it redirects to. For
/// an authorization server that approves without a person (tests, automated agents):
/// pass it to [`OAuth::on_authorize`].
///
/// `url` must be `https`, or `http` to loopback. Called from a sign-in's authorization
/// step, it reaches only the addresses the sign-in's other URLs may (a loopback or private
/// address only for a server at one); otherwise public addresses and loopback.
pub async fn follow_redirect(url: String) -> Result<String, String> {
    let reach = SIGN_IN_REACH
        .try_with(Reach::clone)
        .unwrap_or_else(|_| Reach::loopback());
    let uri = reach.checked(&url)?;
    reach.resolved(&uri).await?;
    let http = outbound::client_within(&reach)?;
    let request = Request::builder()
        .uri(uri)
        .body(Full::new(Bytes::new()))
        .map_err(|e| e.to_string())?;
    let answer = outbound::exchange(&http, &url, request, EXCHANGE_DEADLINE, MAX_ANSWER).await?;
    if let Some(remote) = answer.remote
        && !reach.allows(remote.ip())
    {
        return Err(reach.refusal(&url, remote.ip()));
    }
    answer
        .headers
        .get(LOCATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .ok_or_else(|| format!("{url} answered {} without a redirect", answer.status))
}

fn origin_of(uri: &Uri) -> String {
    format!(
        "{}://{}",
        uri.scheme_str().unwrap_or("https"),
        uri.authority().map(|a| a.as_str()).unwrap_or_default()
    )
}

/// Fields as a form (`outbound::form`), from owned values.
fn form(fields: &[(&str, String)]) -> String {
    let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    outbound::form(&fields)
}

/// The query parameters of a URL, decoded.
fn query_of(url: &str) -> HashMap<String, String> {
    let query = url.split_once('?').map_or("", |(_, q)| q);
    let query = query.split('#').next().unwrap_or_default();
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let decode = |s: &str| {
                percent_decode_str(&s.replace('+', " "))
                    .decode_utf8_lossy()
                    .into_owned()
            };
            (decode(k), decode(v))
        })
        .collect()
}

/// `bytes` random bytes, base64url without padding.
fn random_text(bytes: usize) -> String {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer).expect("the system's random source");
    URL_SAFE_NO_PAD.encode(buffer)
}

/// A key this client proves possession of (DPoP, RFC 9449), and the nonces the servers
/// asked for.
struct Dpop {
    key: ring::signature::EcdsaKeyPair,
    jwk: Value,
    server_nonce: Mutex<Option<String>>,
    resource_nonce: Mutex<Option<String>>,
}

impl Dpop {
    fn new() -> Dpop {
        let random = ring::rand::SystemRandom::new();
        let algorithm = &ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING;
        let pkcs8 = ring::signature::EcdsaKeyPair::generate_pkcs8(algorithm, &random)
            .expect("the system's random source");
        let key = ring::signature::EcdsaKeyPair::from_pkcs8(algorithm, pkcs8.as_ref(), &random)
            .expect("a key just made is valid");
        use ring::signature::KeyPair as _;
        // The public key is the uncompressed point: 0x04, then x and y.
        let point = key.public_key().as_ref();
        let jwk = json!({
            "kty": "EC",
            "crv": "P-256",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        });
        Dpop {
            key,
            jwk,
            server_nonce: Mutex::new(None),
            resource_nonce: Mutex::new(None),
        }
    }

    /// A proof for one request: its method and URL (without query or fragment), the hash
    /// of the token it carries, and the server's nonce.
    fn proof(&self, method: &str, url: &str, ath: Option<&str>, nonce: Option<&str>) -> String {
        let htu = url.split(['?', '#']).next().unwrap_or(url);
        let mut claims = json!({
            "jti": random_text(16),
            "htm": method,
            "htu": htu,
            "iat": unix_now(),
        });
        if let Some(ath) = ath {
            claims["ath"] = ath.into();
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = nonce.into();
        }
        let header = json!({ "typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk });
        sign_es256(&self.key, &header, &claims)
    }
}

/// A compact JWS signed with ES256.
fn sign_es256(key: &ring::signature::EcdsaKeyPair, header: &Value, claims: &Value) -> String {
    let input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let signature = key
        .sign(&ring::rand::SystemRandom::new(), input.as_bytes())
        .expect("signing with a valid key");
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref()))
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The DER inside a PEM block.
fn pem_body(pem: &str) -> Result<Vec<u8>, String> {
    let body: String = pem
        .lines()
        .filter(|line| !line.starts_with("-----"))
        .map(str::trim)
        .collect();
    STANDARD
        .decode(body)
        .map_err(|e| format!("the key is not PEM: {e}"))
}

/// Exchanges an identity provider's ID token for an identity assertion JWT grant (ID-JAG)
/// for the authorization server `audience` (RFC 8693 token exchange, as enterprise-managed
/// authorization does): pass the result as the assertion of [`OAuth::jwt_bearer`].
pub async fn exchange_id_token(
    idp_token_endpoint: &str,
    id_token: &str,
    idp_client_id: Option<&str>,
    audience: &str,
    resource: Option<&str>,
) -> Result<String, String> {
    let http = outbound::client()?;
    let mut fields = vec![
        (
            "grant_type",
            "urn:ietf:params:oauth:grant-type:token-exchange".to_owned(),
        ),
        ("subject_token", id_token.to_owned()),
        (
            "subject_token_type",
            "urn:ietf:params:oauth:token-type:id_token".to_owned(),
        ),
        (
            "requested_token_type",
            "urn:ietf:params:oauth:token-type:id-jag".to_owned(),
        ),
        ("audience", audience.to_owned()),
    ];
    if let Some(resource) = resource {
        fields.push(("resource", resource.to_owned()));
    }
    if let Some(client_id) = idp_client_id {
        fields.push(("client_id", client_id.to_owned()));
    }
    let (status, body, _) = exchange(
        &http,
        &Reach::any(),
        Method::POST,
        idp_token_endpoint,
        Some(("application/x-www-form-urlencoded", form(&fields))),
        &[],
    )
    .await
    .map_err(|e| e.to_string())?;
    let answer: Value = serde_json::from_str(&body)
        .map_err(|e| format!("the identity provider answered {status} with no JSON: {e}"))?;
    if !status.is_success() {
        return Err(format!(
            "the identity provider refused the exchange ({status}): {}",
            answer["error"].as_str().unwrap_or("no error code")
        ));
    }
    answer["access_token"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| "the identity provider's answer has no access_token".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_read_with_quotes_and_escapes() {
        let challenge = parse_challenge(
            r#"Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://a.example/.well-known/oauth-protected-resource/mcp""#,
        );
        assert_eq!(challenge.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(challenge.scope.as_deref(), Some("files:read files:write"));
        assert_eq!(
            challenge.resource_metadata.as_deref(),
            Some("https://a.example/.well-known/oauth-protected-resource/mcp")
        );
        let bare = parse_challenge(r#"Basic realm="x", Bearer scope=a, error="q\"x""#);
        assert_eq!(bare.scope.as_deref(), Some("a"));
        assert_eq!(bare.error.as_deref(), Some("q\"x"));
    }

    #[test]
    fn a_printed_url_carries_no_terminal_escapes() {
        let url = "https://as.example/authorize\x1b]8;;https://evil.example\x1b\\x\x1b]8;;\x07\x1b[2K\r\u{9b}y";
        let printed = printable(url);
        assert!(!printed.chars().any(char::is_control), "{printed:?}");
        assert_eq!(
            printed,
            "https://as.example/authorize%1B]8;;https://evil.example%1B\\x%1B]8;;%07%1B[2K%0D%C2%9By"
        );
    }

    #[test]
    fn scopes_are_joined_once_each() {
        assert_eq!(union(Some("a b"), Some("b c")).as_deref(), Some("a b c"));
        assert_eq!(union(None, None), None);
    }

    #[test]
    fn redirect_queries_are_decoded() {
        let q = query_of("http://127.0.0.1:1/callback?code=a%2Fb&state=x+y&iss=https%3A%2F%2Fas");
        assert_eq!(q["code"], "a/b");
        assert_eq!(q["state"], "x y");
        assert_eq!(q["iss"], "https://as");
    }
}
