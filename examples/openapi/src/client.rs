//! Calling the API: one HTTP/1.1 request per tool call, made with hyper's connection API over
//! a Tokio TCP stream to an `http://` base URL, bounded in time and in size.

use std::time::Duration;

use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Bytes;
use hyper::header::{ACCEPT, CONTENT_TYPE, HOST};
use hyper::{Request, Uri};
use hyper_util::rt::TokioIo;
use mcp_runtime::prelude::*;
use mcp_runtime::serde_json::{self, Map, Value, json};
use mcp_runtime::tokio;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use crate::openapi::{self, BODY, Location, Operation, Piece};

/// How long connecting to the API may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a whole call may take: connecting, sending, and reading the answer.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest answer read; a larger one is a tool error.
const MAX_ANSWER_BYTES: usize = 4 << 20;
/// How much of a failed call's answer its tool error quotes.
const QUOTED_CHARS: usize = 2_000;

/// Every character but RFC 3986's unreserved ones (letters, digits, `-`, `.`, `_`, `~`) is
/// percent-encoded: a value so encoded is one path segment, or one query key or value,
/// whatever it holds (`/`, `?`, `&`, `#`, `%`…).
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The API, at its base URL.
#[derive(Debug)]
pub struct Api {
    /// The base URL, as given, for messages.
    url: String,
    /// `host:port`, to connect to.
    address: String,
    /// The `Host` header: the URL's authority.
    host: String,
    /// The URL's path without its last `/` (`/v1`, or empty), which every operation's path
    /// follows.
    base_path: String,
}

impl Api {
    /// The API at `url`, an `http://` URL; anything else is refused, saying what to give.
    pub fn new(url: &str) -> Result<Api, String> {
        let example = "e.g. --base-url http://127.0.0.1:8080/v1";
        let uri: Uri = url
            .parse()
            .map_err(|e| format!("the base URL `{url}` is not a URL ({e}): give one, {example}"))?;
        match uri.scheme_str() {
            Some("http") => {}
            Some("https") => {
                return Err(format!(
                    "the base URL `{url}` is https, and this example speaks plain HTTP only: it is meant for an API on this machine or network; give its http:// URL, {example}"
                ));
            }
            _ => {
                return Err(format!(
                    "the base URL `{url}` is not an absolute http:// URL: give one, {example}"
                ));
            }
        }
        let authority = uri
            .authority()
            .ok_or_else(|| format!("the base URL `{url}` names no host: {example}"))?;
        if authority.as_str().contains('@') {
            return Err(format!(
                "the base URL `{url}` holds credentials, which this example does not send: leave them out"
            ));
        }
        if uri.query().is_some() {
            return Err(format!(
                "the base URL `{url}` has a query: leave it out, operations add their own"
            ));
        }
        Ok(Api {
            url: url.to_owned(),
            address: format!(
                "{}:{}",
                authority.host(),
                authority.port_u16().unwrap_or(80)
            ),
            host: authority.as_str().to_owned(),
            base_path: uri.path().trim_end_matches('/').to_owned(),
        })
    }

    /// The base URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Calls `operation` with `arguments` (already validated against its schema): the
    /// status and the JSON body of a 2xx answer, or a tool error naming the status and
    /// quoting the body of any other, or saying why there was no answer.
    pub async fn call(
        &self,
        ctx: &Context,
        operation: &Operation,
        arguments: &Value,
    ) -> Result<Json<Value>, String> {
        let empty = Map::new();
        let arguments = arguments.as_object().unwrap_or(&empty);
        let target = self.target(operation, arguments)?;
        let request_line = format!("{} {target}", operation.method);
        ctx.debug(request_line.clone()).await;

        let mut request = Request::builder()
            .method(operation.method.clone())
            .uri(&target)
            .header(HOST, &self.host)
            .header(ACCEPT, "application/json");
        let body = match arguments.get(BODY).filter(|_| operation.takes_body) {
            Some(body) => {
                request = request.header(CONTENT_TYPE, "application/json");
                Bytes::from(serde_json::to_vec(body).map_err(|e| e.to_string())?)
            }
            None => Bytes::new(),
        };
        let request = request
            .body(Full::new(body))
            .map_err(|e| format!("{request_line}: cannot make the request: {e}"))?;

        let (status, content_type, answer) =
            match tokio::time::timeout(REQUEST_TIMEOUT, self.exchange(request)).await {
                Ok(Ok(answer)) => answer,
                Ok(Err(problem)) => return Err(format!("{request_line}: {problem}")),
                Err(_) => {
                    return Err(format!(
                        "{request_line}: the API at {} did not answer within {}s",
                        self.url,
                        REQUEST_TIMEOUT.as_secs()
                    ));
                }
            };
        let body = if answer.is_empty() {
            None
        } else if openapi::is_json(&content_type)
            && let Ok(json) = serde_json::from_slice::<Value>(&answer)
        {
            Some(json)
        } else {
            Some(Value::String(String::from_utf8_lossy(&answer).into_owned()))
        };
        if !status.is_success() {
            let quoted = match &body {
                None => " (no body)".to_owned(),
                Some(Value::String(text)) => format!(": {}", quote(text)),
                Some(json) => format!(": {}", quote(&json.to_string())),
            };
            return Err(format!("{request_line}: the API answered {status}{quoted}"));
        }
        let mut result = json!({"status": status.as_u16()});
        if let Some(body) = body {
            result["body"] = body;
        }
        Ok(Json(result))
    }

    /// The request's target: the base path, the operation's path with each parameter
    /// percent-encoded as one segment, and the query.
    fn target(
        &self,
        operation: &Operation,
        arguments: &Map<String, Value>,
    ) -> Result<String, String> {
        let mut target = self.base_path.clone();
        for piece in &operation.pieces {
            match piece {
                Piece::Literal(text) => target.push_str(text),
                Piece::Parameter(name) => {
                    let value = arguments.get(name).and_then(text).ok_or_else(|| {
                        format!(
                            "`{name}` must be given as text or a number: it names the {name} in {}",
                            operation.path
                        )
                    })?;
                    if value.is_empty() {
                        return Err(format!("`{name}` cannot be empty: give a {name}"));
                    }
                    // Encoded or not, `.` and `..` are the segments that climb a path.
                    if value == "." || value == ".." {
                        return Err(format!(
                            "`{name}` cannot be {value:?}, which would climb out of {}: give a {name}",
                            operation.path
                        ));
                    }
                    target.extend(utf8_percent_encode(&value, COMPONENT));
                }
            }
        }
        if target.is_empty() {
            target.push('/');
        }
        let mut query = Vec::new();
        for (name, location) in &operation.parameters {
            let Some(value) = arguments.get(name).filter(|_| *location == Location::Query) else {
                continue;
            };
            // An array is the parameter repeated (OpenAPI's default `form` style, exploded).
            let values = match value {
                Value::Array(items) => items.iter().collect(),
                one => vec![one],
            };
            for value in values.into_iter().filter_map(text) {
                query.push(format!(
                    "{}={}",
                    utf8_percent_encode(name, COMPONENT),
                    utf8_percent_encode(&value, COMPONENT)
                ));
            }
        }
        if !query.is_empty() {
            target.push('?');
            target.push_str(&query.join("&"));
        }
        Ok(target)
    }

    /// Sends `request` on a connection of its own and reads the answer: its status, content
    /// type and body.
    async fn exchange(
        &self,
        request: Request<Full<Bytes>>,
    ) -> Result<(hyper::StatusCode, String, Bytes), String> {
        let stream = match tokio::time::timeout(
            CONNECT_TIMEOUT,
            tokio::net::TcpStream::connect(&self.address),
        )
        .await
        {
            Ok(Ok(stream)) => stream,
            Ok(Err(e)) => {
                return Err(format!(
                    "cannot connect to the API at {} ({e}): is it running? Give its address with --base-url",
                    self.url
                ));
            }
            Err(_) => {
                return Err(format!(
                    "cannot connect to the API at {}: no answer within {}s",
                    self.url,
                    CONNECT_TIMEOUT.as_secs()
                ));
            }
        };
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("cannot speak HTTP to the API at {}: {e}", self.url))?;
        let call = async move {
            let response = sender
                .send_request(request)
                .await
                .map_err(|e| format!("the API at {} did not answer: {e}", self.url))?;
            let (parts, body) = response.into_parts();
            let body = Limited::new(body, MAX_ANSWER_BYTES)
                .collect()
                .await
                .map_err(|e| match e.downcast_ref::<LengthLimitError>() {
                    Some(_) => format!(
                        "the API's answer is larger than {} MiB, more than this example reads",
                        MAX_ANSWER_BYTES >> 20
                    ),
                    None => format!("the API's answer broke off: {e}"),
                })?
                .to_bytes();
            // Without its sender, the connection closes once the exchange is over.
            drop(sender);
            let content_type = parts
                .headers
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned();
            Ok((parts.status, content_type, body))
        };
        // The connection does the reading and writing; both end with the exchange, so nothing
        // is left running (dropped by the timeout, both stop at once).
        let (answer, _closed) = tokio::join!(call, connection);
        answer
    }
}

/// A parameter's value as text: text as it is, a number or a boolean as JSON writes it, an
/// object as JSON; `null` is no value.
fn text(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(text) => Some(text.clone()),
        Value::Array(_) => None,
        other => Some(other.to_string()),
    }
}

/// At most [`QUOTED_CHARS`] characters of `text`.
fn quote(text: &str) -> String {
    match text.char_indices().nth(QUOTED_CHARS) {
        Some((end, _)) => format!("{}… ({} bytes in all)", &text[..end], text.len()),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openapi::Document;

    fn petstore() -> Vec<Operation> {
        Document::parse(include_str!("../petstore.json"))
            .unwrap()
            .operations()
            .0
    }

    #[test]
    fn parameters_are_percent_encoded_and_cannot_change_the_path() {
        let api = Api::new("http://127.0.0.1:9/v1/").unwrap();
        let operations = petstore();
        let (list, get) = (&operations[0], &operations[2]);
        let target =
            |operation, arguments: Value| api.target(operation, arguments.as_object().unwrap());
        assert_eq!(target(get, json!({"petId": "7"})).unwrap(), "/v1/pets/7");
        assert_eq!(
            target(get, json!({"petId": "../admin?x=1#y"})).unwrap(),
            "/v1/pets/..%2Fadmin%3Fx%3D1%23y"
        );
        assert!(target(get, json!({"petId": ".."})).is_err());
        assert_eq!(
            target(list, json!({"limit": 2, "tag": "a&b=c d"})).unwrap(),
            "/v1/pets?limit=2&tag=a%26b%3Dc%20d"
        );
        assert_eq!(target(list, json!({})).unwrap(), "/v1/pets");
    }

    #[test]
    fn only_plain_http_urls_are_taken() {
        let api = Api::new("http://[::1]:8080").unwrap();
        assert_eq!(
            (api.address.as_str(), api.base_path.as_str()),
            ("[::1]:8080", "")
        );
        assert_eq!(
            Api::new("http://localhost/api").unwrap().address,
            "localhost:80"
        );
        for (url, problem) in [
            ("https://api.example.com", "plain HTTP only"),
            ("/v1", "not an absolute http:// URL"),
            ("http://user:secret@host", "credentials"),
        ] {
            let refused = Api::new(url).unwrap_err();
            assert!(refused.contains(problem), "{url}: {refused}");
        }
    }
}
