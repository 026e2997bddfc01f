//! The client's OAuth (`mcp_runtime::client::oauth`) against a hostile pair of servers
//! (tests/servers/hostile_auth.py: a protected MCP server and its authorization server, on
//! loopback): what a server or its metadata may make the client do, and what it may not.

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_runtime::client::oauth::{OAuth, follow_redirect};
use mcp_runtime::client::{CallError, Client};
use mcp_runtime::serde_json::{Value, json};
use mcp_runtime::tokio;

/// The hostile pair in `scenario`, the MCP server bound to `bind`; ends when dropped.
struct HostileAuth {
    _child: tokio::process::Child,
    mcp_port: u16,
}

impl HostileAuth {
    async fn start(scenario: &str, bind: &str) -> HostileAuth {
        use tokio::io::AsyncBufReadExt as _;
        let python = std::env::var("MCP_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
        let mut child = tokio::process::Command::new(python)
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/servers/hostile_auth.py"
            ))
            .args([scenario, bind])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("python3 runs tests/servers/hostile_auth.py");
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        tokio::io::BufReader::new(stdout)
            .read_line(&mut line)
            .await
            .unwrap();
        let mcp_port = line.split_whitespace().next().unwrap().parse().unwrap();
        HostileAuth {
            _child: child,
            mcp_port,
        }
    }

    async fn loopback(scenario: &str) -> HostileAuth {
        HostileAuth::start(scenario, "127.0.0.1").await
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.mcp_port)
    }

    /// How many times a code was exchanged for a token: the sign-ins that got as far as a
    /// person, or the step standing in for one.
    fn sign_ins(&self) -> usize {
        self.seen()
            .iter()
            .filter(|s| s["at"] == "token" && s["form"]["grant_type"] == "authorization_code")
            .count()
    }

    /// What the authorization server was sent, in order.
    fn seen(&self) -> Vec<Value> {
        let answer = http_get(&format!("127.0.0.1:{}", self.mcp_port), "/seen");
        let body = answer.split_once("\r\n\r\n").unwrap().1;
        mcp_runtime::serde_json::from_str::<Vec<Value>>(body).unwrap()
    }
}

/// A plain HTTP/1.1 GET, its whole answer as text.
fn http_get(address: &str, target: &str) -> String {
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    write!(
        stream,
        "GET {target} HTTP/1.1\r\nhost: {address}\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
}

/// OAuth that approves without a person, as an automated agent would.
fn automatic() -> OAuth {
    OAuth::new().on_authorize("http://127.0.0.1:1/callback", |url, _redirect| {
        follow_redirect(url)
    })
}

async fn connect(oauth: OAuth, url: &str) -> Result<Client, CallError> {
    Client::builder()
        .timeout(Duration::from_secs(20))
        .oauth(oauth)
        .http(url)
        .await
}

fn auth_error(result: Result<Client, CallError>) -> String {
    match result {
        Err(CallError::Auth(message)) => message,
        Err(other) => panic!("expected an authorization error, got {other:?}"),
        Ok(_) => panic!("expected an authorization error, the client connected"),
    }
}

/// Signs in to the pair in `scenario` without a person, and calls its tool.
async fn sign_in_and_call(scenario: &str) {
    let server = HostileAuth::loopback(scenario).await;
    let client = connect(automatic(), &server.url()).await.unwrap();
    let called = client.call_tool("probe", json!({})).await.unwrap();
    assert_eq!(called.text(), "ok");
    client.close().await;
}

#[mcp_runtime::test]
async fn a_well_behaved_server_is_signed_in_to() {
    sign_in_and_call("normal").await;
}

#[mcp_runtime::test]
async fn a_token_that_never_expires_is_no_panic() {
    sign_in_and_call("expires").await;
}

#[mcp_runtime::test]
async fn fallback_metadata_naming_another_issuer_is_refused() {
    let server = HostileAuth::loopback("fallback_foreign").await;
    let message = auth_error(connect(automatic(), &server.url()).await);
    assert!(message.contains("issuer"), "{message}");
}

#[mcp_runtime::test]
async fn fallback_sends_the_resource_in_both_requests() {
    let server = HostileAuth::loopback("fallback").await;
    let client = connect(automatic(), &server.url()).await.unwrap();
    client.close().await;
    let seen = server.seen();
    let authorize = seen.iter().find(|s| s["at"] == "authorize").unwrap();
    let token = seen.iter().find(|s| s["at"] == "token").unwrap();
    assert_eq!(authorize["query"]["resource"], server.url());
    assert_eq!(token["form"]["resource"], server.url());
}

#[mcp_runtime::test]
async fn an_authorization_endpoint_that_is_not_https_never_reaches_the_browser() {
    for scenario in ["scheme_js", "scheme_file", "http_remote"] {
        let server = HostileAuth::loopback(scenario).await;
        let shown = Arc::new(AtomicBool::new(false));
        let oauth = OAuth::new().on_authorize("http://127.0.0.1:1/callback", {
            let shown = shown.clone();
            move |url, _redirect| {
                shown.store(true, Ordering::SeqCst);
                follow_redirect(url)
            }
        });
        let message = auth_error(connect(oauth, &server.url()).await);
        assert!(
            message.contains("authorization_endpoint"),
            "{scenario}: {message}"
        );
        assert!(
            !shown.load(Ordering::SeqCst),
            "{scenario}: the URL was shown"
        );
    }
}

#[mcp_runtime::test]
async fn an_error_quoting_the_server_carries_no_terminal_escapes() {
    let server = HostileAuth::loopback("termesc").await;
    let message = auth_error(connect(automatic(), &server.url()).await);
    assert!(message.contains("authorization_endpoint"), "{message}");
    assert!(!message.chars().any(char::is_control), "{message:?}");
}

#[mcp_runtime::test]
async fn follow_redirect_asks_only_https_or_loopback() {
    for url in [
        "http://192.0.2.77:9/latest/meta-data/",
        "http://169.254.169.254/latest/meta-data/",
    ] {
        let refused = follow_redirect(url.into()).await.unwrap_err();
        assert!(refused.contains("https"), "{url}: {refused}");
    }
}

#[mcp_runtime::test]
async fn an_authorization_server_that_does_not_name_pkce_is_refused() {
    let server = HostileAuth::loopback("nopkce").await;
    let message = auth_error(connect(automatic(), &server.url()).await);
    assert!(message.contains("PKCE"), "{message}");
    assert!(server.seen().iter().all(|s| s["at"] != "authorize"));
}

#[mcp_runtime::test]
async fn resource_metadata_for_a_prefix_of_the_server_is_refused() {
    let server = HostileAuth::loopback("prefix").await;
    let message = auth_error(connect(automatic(), &server.url()).await);
    assert!(message.contains("not for"), "{message}");
}

#[mcp_runtime::test]
async fn resource_metadata_without_a_resource_is_refused() {
    let server = HostileAuth::loopback("noresource").await;
    let message = auth_error(connect(automatic(), &server.url()).await);
    assert!(message.contains("resource"), "{message}");
}

#[mcp_runtime::test]
async fn step_up_sign_ins_are_capped_across_requests() {
    let server = HostileAuth::loopback("stepup").await;
    let client = connect(automatic(), &server.url()).await.unwrap();
    for _ in 0..6 {
        assert!(client.call_tool("probe", json!({})).await.is_err());
    }
    client.close().await;
    let sign_ins = server.sign_ins();
    assert!(sign_ins <= 4, "{sign_ins} sign-ins for six calls");
}

/// A non-loopback address of this machine, if it has one.
fn own_address() -> Option<std::net::IpAddr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    // Nothing is sent: connecting a UDP socket only picks the route.
    socket.connect("192.0.2.1:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

#[mcp_runtime::test]
async fn a_server_off_loopback_cannot_send_the_client_to_loopback() {
    let Some(own) = own_address() else {
        eprintln!("skipped: this machine has no address but loopback");
        return;
    };
    for scenario in ["ssrf_literal", "ssrf_name"] {
        let server = HostileAuth::start(scenario, "0.0.0.0").await;
        let url = format!("http://{own}:{}/mcp", server.mcp_port);
        let message = auth_error(connect(automatic(), &url).await);
        assert!(
            message.contains("Loopback") || message.contains("loopback"),
            "{scenario}: {message}"
        );
        let seen = server.seen();
        assert!(
            seen.iter().all(|s| s["at"] != "as"),
            "{scenario}: the loopback service was asked: {seen:?}"
        );
    }
}

/// The default sign-in, its browser played by `browser`, which gets the authorization URL.
async fn sign_in_through_listener(
    scenario: &str,
    browser: impl FnOnce(String) -> String + Send + 'static,
) -> (Result<Client, CallError>, String) {
    let server = HostileAuth::loopback(scenario).await;
    let (sender, receiver) = std::sync::mpsc::channel::<String>();
    let oauth = OAuth::new().open_with(move |url| {
        let _ = sender.send(url.to_owned());
    });
    let browser = std::thread::spawn(move || browser(receiver.recv().unwrap()));
    let connected = tokio::time::timeout(Duration::from_secs(30), connect(oauth, &server.url()))
        .await
        .expect("the sign-in ended within 30 s");
    let page = tokio::task::spawn_blocking(move || browser.join().unwrap())
        .await
        .unwrap();
    (connected, page)
}

/// The listener's address and the URL the authorization server redirects to.
fn authorize(url: &str) -> (String, String) {
    let query = url.split_once('?').unwrap().1;
    let redirect = query
        .split('&')
        .find_map(|pair| pair.strip_prefix("redirect_uri="))
        .unwrap()
        .replace("%3A", ":")
        .replace("%2F", "/");
    let listener = redirect
        .trim_start_matches("http://")
        .trim_end_matches("/callback")
        .to_owned();
    let authority = url
        .trim_start_matches("http://")
        .split_once('/')
        .unwrap()
        .0
        .to_owned();
    let target = &url[url.find(&authority).unwrap() + authority.len()..];
    let answer = http_get(&authority, target);
    let location = answer
        .lines()
        .find_map(|line| {
            line.strip_prefix("location: ")
                .or(line.strip_prefix("Location: "))
        })
        .unwrap()
        .trim()
        .to_owned();
    (listener, location)
}

#[mcp_runtime::test]
async fn an_idle_connection_or_a_forged_callback_does_not_stop_the_sign_in() {
    let (connected, forged) = sign_in_through_listener("normal", |url| {
        let (listener, location) = authorize(&url);
        let _idle = std::net::TcpStream::connect(&listener).unwrap();
        let forged = http_get(&listener, "/callback?code=EVIL&state=forged");
        let target = &location[location.find("/callback").unwrap()..];
        let signed_in = http_get(&listener, target);
        assert!(signed_in.contains("Signed in"), "{signed_in}");
        forged
    })
    .await;
    assert!(forged.starts_with("HTTP/1.1 400"), "{forged}");
    let client = connected.unwrap();
    client.close().await;
}

#[mcp_runtime::test]
async fn a_failed_sign_in_is_not_shown_as_signed_in() {
    let (connected, page) = sign_in_through_listener("token_refused", |url| {
        let (listener, location) = authorize(&url);
        let target = &location[location.find("/callback").unwrap()..];
        http_get(&listener, target)
    })
    .await;
    assert!(auth_error(connected).contains("invalid_grant"));
    assert!(page.contains("Not signed in"), "{page}");
    assert!(!page.contains("<title>Signed in"), "{page}");
}

#[mcp_runtime::test]
async fn a_person_signing_in_is_not_cut_off_by_the_requests_timeout() {
    let server = HostileAuth::loopback("normal").await;
    // The person takes longer than the request may: the sign-in has its own five minutes.
    let slow_person =
        OAuth::new().on_authorize("http://127.0.0.1:1/callback", |url, _redirect| async move {
            tokio::time::sleep(Duration::from_secs(5)).await;
            follow_redirect(url).await
        });
    let client = Client::builder()
        .timeout(Duration::from_secs(3))
        .oauth(slow_person)
        .http(&server.url())
        .await
        .expect("the request that met the sign-in waits for the person");
    let called = client.call_tool("probe", json!({})).await.unwrap();
    assert_eq!(called.text(), "ok");
    client.close().await;
}

#[mcp_runtime::test]
async fn a_call_refused_with_a_token_renewed_since_is_sent_again_without_a_sign_in() {
    let server = HostileAuth::loopback("renewed").await;
    let client = connect(automatic(), &server.url()).await.unwrap();
    // Both calls carry the first token, and are refused once both came: one signs in
    // again, and the other, refused with the token that sign-in replaced, takes the new one.
    let (first, second) = tokio::join!(
        client.call_tool("probe", json!({})),
        client.call_tool("probe", json!({}))
    );
    assert_eq!(first.unwrap().text(), "ok");
    assert_eq!(second.unwrap().text(), "ok");
    client.close().await;
    let sign_ins = server.sign_ins();
    assert_eq!(
        sign_ins, 2,
        "the first sign-in, and one for the expired token"
    );
}
