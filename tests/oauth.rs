//! The server as an OAuth 2.1 resource server, against a real authorization server
//! (`oauth2-mock-server` on Node.js, issuing RSA-signed JWTs): the caller server verifying
//! JWTs with the published keys (`JwtVerifier`), and asking the introspection endpoint
//! (`Introspection`). Every refusal a client can meet: expired, for another resource, from
//! another issuer, signed with an unknown key, after a key rotation, with a forbidden
//! algorithm, lacking a scope (and stepping up), and the authorization server unreachable.

use mcp_tests::http::{HttpServer, Response, Session};
use mcp_tests::oauth::AuthorizationServer;
use serde_json::{Value, json};

/// This server's canonical URI, the audience its tokens must name. (Not its loopback
/// address: behind a proxy or TLS terminator the public URL is the canonical one.)
const AUDIENCE: &str = "https://mcp.example.test/mcp";

fn caller(issuer: &AuthorizationServer, env: &[(&str, &str)]) -> HttpServer {
    let mut all = vec![
        ("OAUTH_ISSUER", issuer.issuer.as_str()),
        ("OAUTH_AUDIENCE", AUDIENCE),
    ];
    all.extend_from_slice(env);
    HttpServer::spawn(env!("CARGO_BIN_EXE_caller").as_ref(), &all)
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "oauth-e2e", "version": "1"}}})
}

/// An `initialize` presenting `token`.
fn present(server: &HttpServer, token: &str) -> Response {
    server
        .request("POST", "/mcp")
        .header("Accept", "application/json, text/event-stream")
        .header("Authorization", &format!("Bearer {token}"))
        .json(&initialize())
        .send()
}

/// Asserts `token` is refused with 401 `invalid_token` for a reason that says `why`.
fn refused(server: &HttpServer, token: &str, why: &str) {
    let response = present(server, token);
    assert_eq!(response.status, 401, "{why}: {response:?}");
    let challenge = response.header("www-authenticate").unwrap_or("").to_owned();
    assert!(
        challenge.starts_with("Bearer error=\"invalid_token\", resource_metadata=\""),
        "{challenge}"
    );
    let text = response.text();
    assert!(text.contains(why), "expected `{why}` in {text}");
}

fn whoami(session: &Session<'_>) -> Value {
    session.call(9, "whoami", json!({}))["result"]["structuredContent"]["result"].clone()
}

#[test]
fn jwts_of_the_authorization_server_are_verified_with_its_published_keys() {
    let issuer = AuthorizationServer::start();
    // Every unknown key fetches the set anew, so a token signed with one is refused for
    // good (401), not asked to come back later (503).
    let server = caller(&issuer, &[("OAUTH_MIN_REFRESH_MS", "0")]);

    // A token from the real token endpoint, for this resource (RFC 8707).
    let token = issuer.client_credentials("reporter", "mcp notes:read", AUDIENCE);
    let session = Session::open_with(&server, "2025-11-25", json!({}), Some(&token));
    let me = whoami(&session);
    assert_eq!(me["subject"], "reporter", "{me}");
    assert_eq!(me["client_id"], "reporter");
    assert_eq!(me["scopes"], json!(["mcp", "notes:read"]));
    assert_eq!(
        me["authorization_seen"], false,
        "the token is not passed on"
    );

    refused(
        &server,
        &issuer.token(&json!({"aud": AUDIENCE, "expires_in": -300})),
        "expired",
    );
    refused(
        &server,
        &issuer.client_credentials("reporter", "mcp", "https://other.example.test/mcp"),
        "for another resource",
    );
    refused(&server, &issuer.token(&json!({})), "no `aud` claim");
    refused(
        &server,
        &issuer.token(&json!({"aud": AUDIENCE, "iss": "https://evil.example.test"})),
        "another issuer",
    );
    refused(
        &server,
        &issuer.token(&json!({"aud": AUDIENCE, "rogue": true})),
        "a key the authorization server does not publish",
    );
    refused(&server, "not.a.jwt", "not a JWT");
    refused(
        &server,
        &issuer.token(&json!({"aud": AUDIENCE, "sub": "", "client_id": ""})),
        "names no subject",
    );

    // Tampered: the payload of one token under the signature of another.
    let good = issuer.token(&json!({"aud": AUDIENCE, "sub": "ada"}));
    let other = issuer.token(&json!({"aud": AUDIENCE, "sub": "eve"}));
    let good: Vec<&str> = good.split('.').collect();
    let other: Vec<&str> = other.split('.').collect();
    refused(
        &server,
        &format!("{}.{}.{}", good[0], other[1], good[2]),
        "bad signature",
    );

    // `alg: none`, and HS256 keyed with the published RSA key (the key-confusion attack).
    let kid = jose_header(good[0])["kid"].as_str().unwrap().to_owned();
    let claims = other[1];
    let none = format!("{}.{claims}.", b64(&json!({"alg": "none", "kid": kid})));
    refused(&server, &none, "not a JWT");
    let jwks = mcp_tests::http::Request::new(
        issuer.issuer.trim_start_matches("http://").parse().unwrap(),
        "GET",
        "/jwks",
    )
    .send()
    .json();
    let public_key = serde_json::to_vec(&jwks["keys"][0]).unwrap();
    let header = b64(&json!({"alg": "HS256", "typ": "JWT", "kid": kid}));
    let signature = hmac_sha256(&public_key, format!("{header}.{claims}").as_bytes());
    refused(
        &server,
        &format!("{header}.{claims}.{signature}"),
        "HS256 are not accepted",
    );
}

#[test]
fn a_missing_scope_is_asked_for_and_a_stepped_up_token_goes_through() {
    let issuer = AuthorizationServer::start();
    let server = caller(&issuer, &[]);
    let token = issuer.client_credentials("writer", "mcp", AUDIENCE);
    let session = Session::open_with(&server, "2025-11-25", json!({}), Some(&token));
    let tools = session.request(1, "tools/list", json!({}));
    assert!(
        !tools.to_string().contains("write_note"),
        "an item the token can never use is unlisted: {tools}"
    );
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "write_note", "arguments": {"text": "hi"}}});
    let response = session.post(&call).send();
    assert_eq!(response.status, 403, "{response:?}");
    let challenge = response.header("www-authenticate").unwrap().to_owned();
    assert!(
        challenge.starts_with("Bearer error=\"insufficient_scope\", scope=\"notes:write\""),
        "{challenge}"
    );
    // The client asks the authorization server for the scope and presents the new token in
    // the same session.
    let stepped_up = issuer.client_credentials("writer", "mcp notes:write", AUDIENCE);
    let session = session.as_caller(Some(&stepped_up));
    let wrote = session.call(3, "write_note", json!({"text": "hi"}));
    assert_eq!(wrote["result"]["content"][0]["text"], "wrote hi", "{wrote}");
    let tools = session.request(4, "tools/list", json!({}));
    assert!(tools.to_string().contains("write_note"), "{tools}");
}

#[test]
fn with_access_token_type_only_a_jwt_must_say_it_is_an_access_token() {
    let issuer = AuthorizationServer::start();
    let server = caller(&issuer, &[("OAUTH_AT_JWT", "1")]);
    refused(
        &server,
        &issuer.token(&json!({"aud": AUDIENCE, "scope": "mcp"})),
        "not an access token",
    );
    let typed = issuer.token(&json!({"aud": AUDIENCE, "scope": "mcp", "typ": "at+jwt"}));
    let response = present(&server, &typed);
    assert_eq!(response.status, 200, "{response:?}");
}

#[test]
fn a_rotated_key_is_fetched_when_first_seen_and_the_old_one_stops_verifying() {
    let issuer = AuthorizationServer::start();
    let server = caller(&issuer, &[("OAUTH_MIN_REFRESH_MS", "0")]);
    let before = issuer.token(&json!({"aud": AUDIENCE, "scope": "mcp"}));
    assert_eq!(present(&server, &before).status, 200);
    issuer.rotate();
    let after = issuer.token(&json!({"aud": AUDIENCE, "scope": "mcp"}));
    let response = present(&server, &after);
    assert_eq!(response.status, 200, "the new key is fetched: {response:?}");
    refused(
        &server,
        &before,
        "a key the authorization server does not publish",
    );
}

#[test]
fn tokens_naming_unknown_keys_cannot_make_the_server_hammer_the_key_set() {
    let issuer = AuthorizationServer::start();
    // The default: at most one fetch caused by unknown keys every 30 s.
    let server = caller(&issuer, &[]);
    let good = issuer.token(&json!({"aud": AUDIENCE, "scope": "mcp"}));
    assert_eq!(present(&server, &good).status, 200);
    let fetched = issuer.stats()["jwks"].as_u64().unwrap();
    assert_eq!(fetched, 1, "the key set is fetched once, then kept");
    for _ in 0..30 {
        let rogue = issuer.token(&json!({"aud": AUDIENCE, "rogue": true}));
        // The key set cannot be fetched again yet: the token may be good after a rotation,
        // so the client is asked to retry, not to throw it away.
        let response = present(&server, &rogue);
        assert_eq!(response.status, 503, "{response:?}");
        assert_eq!(response.header("retry-after"), Some("5"));
    }
    assert_eq!(present(&server, &good).status, 200);
    let after = issuer.stats()["jwks"].as_u64().unwrap();
    assert_eq!(
        after, fetched,
        "30 unknown keys within the refresh period fetched nothing more"
    );
}

#[test]
fn introspection_accepts_active_tokens_for_this_resource_and_keeps_the_answer() {
    let issuer = AuthorizationServer::start();
    let server = caller(&issuer, &[("OAUTH_INTROSPECTION", "1")]);
    let token = issuer.client_credentials("reporter", "mcp notes:write", AUDIENCE);
    let session = Session::open_with(&server, "2025-11-25", json!({}), Some(&token));
    let me = whoami(&session);
    assert_eq!(me["subject"], "reporter", "{me}");
    assert_eq!(me["client_id"], "reporter");
    assert_eq!(me["scopes"], json!(["mcp", "notes:write"]));
    let asked = issuer.stats()["introspect"].as_u64().unwrap();
    let wrote = session.call(3, "write_note", json!({"text": "x"}));
    assert_eq!(wrote["result"]["content"][0]["text"], "wrote x", "{wrote}");
    assert_eq!(
        issuer.stats()["introspect"].as_u64().unwrap(),
        asked,
        "the answer was kept"
    );

    refused(
        &server,
        &issuer.client_credentials("reporter", "mcp", "https://other.example.test/mcp"),
        "for another resource",
    );
    refused(
        &server,
        &issuer.token(&json!({"aud": AUDIENCE, "expires_in": -300})),
        "not active",
    );
    refused(
        &server,
        &issuer.token(&json!({"aud": AUDIENCE, "rogue": true})),
        "not active",
    );
}

#[test]
fn an_unreachable_authorization_server_is_a_503_to_retry_not_a_bad_token() {
    // A port nothing listens on: bound, then closed.
    let port = mcp_tests::cluster::free_port();
    let issuer = format!("http://127.0.0.1:{port}");
    let server = HttpServer::spawn(
        env!("CARGO_BIN_EXE_caller").as_ref(),
        &[("OAUTH_ISSUER", &issuer), ("OAUTH_AUDIENCE", AUDIENCE)],
    );
    let response = present(&server, "eyJhbGciOiJSUzI1NiJ9.e30.c2ln");
    assert_eq!(response.status, 503, "{response:?}");
    assert_eq!(response.header("retry-after"), Some("5"));
    // Without a token it is the usual 401 that sends the client to the authorization server.
    let bare = server
        .request("POST", "/mcp")
        .header("Accept", "application/json, text/event-stream")
        .json(&initialize())
        .send();
    assert_eq!(bare.status, 401);
}

#[test]
fn the_protected_resource_metadata_sends_clients_to_the_issuer() {
    let issuer = AuthorizationServer::start();
    let server = caller(&issuer, &[]);
    let metadata = server
        .request("GET", "/.well-known/oauth-protected-resource/mcp")
        .send()
        .json();
    assert_eq!(metadata["resource"], AUDIENCE, "{metadata}");
    assert_eq!(metadata["authorization_servers"], json!([issuer.issuer]));
    assert_eq!(
        metadata["scopes_supported"],
        json!(["admin", "ledger:read", "notes:read", "notes:write"])
    );
}

fn b64(value: &Value) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string())
}

fn jose_header(part: &str) -> Value {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part)
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

fn hmac_sha256(key: &[u8], message: &[u8]) -> String {
    use base64::Engine as _;
    use hmac::{KeyInit, Mac};
    let mut mac = <hmac::Hmac<sha2::Sha256> as KeyInit>::new_from_slice(key).unwrap();
    mac.update(message);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
}

/// A browser, for the client's sign-in: asks `url` (the authorization server approves at
/// once) and follows its redirect to the client's local listener.
fn browse(url: &str) {
    fn split(url: &str) -> (std::net::SocketAddr, String) {
        let rest = url.strip_prefix("http://").expect("a loopback http URL");
        let (authority, target) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let authority = authority.replace("localhost", "127.0.0.1");
        (authority.parse().expect("host:port"), target.to_owned())
    }
    let (addr, target) = split(url);
    let approved = mcp_tests::http::Request::new(addr, "GET", &target).send();
    assert_eq!(approved.status, 302, "{approved:?}");
    let back = approved.header("location").expect("a redirect").to_owned();
    let (addr, target) = split(&back);
    let landed = mcp_tests::http::Request::new(addr, "GET", &target).send();
    assert_eq!(
        landed.status, 200,
        "the listener took the redirect: {landed:?}"
    );
}

#[mcp_runtime::test]
async fn the_client_signs_in_with_its_local_redirect_listener_and_uses_the_notes_example() {
    use mcp_runtime::client::oauth::OAuth;
    use mcp_runtime::client::{Client, Era};

    let issuer = AuthorizationServer::start();
    let scratch = mcp_tests::Scratch::new("client-oauth");
    let db = scratch.path("notes.db");
    let addr = format!("127.0.0.1:{}", mcp_tests::cluster::free_port());
    let server = HttpServer::spawn_on(
        &mcp_tests::workspace_binary("notes"),
        &addr,
        &[
            std::ffi::OsStr::new("--db"),
            db.as_os_str(),
            std::ffi::OsStr::new("--issuer"),
            std::ffi::OsStr::new(&issuer.issuer),
        ],
        &[],
    );
    for era in [Era::Handshake, Era::Auto] {
        let opened = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = opened.clone();
        let oauth = OAuth::new()
            .client_name("client tests")
            .open_with(move |url| {
                seen.lock().unwrap().push(url.to_owned());
                let url = url.to_owned();
                // The browser runs beside the client, which waits on its listener meanwhile.
                std::thread::spawn(move || browse(&url));
            });
        let client = Client::builder()
            .era(era)
            .oauth(oauth)
            .http(&server.url("/mcp"))
            .await
            .unwrap();
        let opened = opened.lock().unwrap().clone();
        assert_eq!(opened.len(), 1, "one sign-in: {opened:?}");
        let url = &opened[0];
        assert!(
            url.starts_with(&format!("{}/authorize?", issuer.issuer)),
            "{url}"
        );
        for part in [
            "code_challenge_method=S256",
            "resource=",
            "scope=notes%3Aread",
        ] {
            assert!(url.contains(part), "{part} in {url}");
        }
        let added = client
            .call_tool(
                "add_note",
                json!({ "title": "signed in", "body": "with PKCE" }),
            )
            .await
            .unwrap();
        assert!(!added.is_error, "{added:?}");
        client.close().await;
    }
    let stats = issuer.stats();
    assert_eq!(stats["register"], 2, "one registration per client: {stats}");
    assert_eq!(stats["authorize"], 2, "{stats}");
}
