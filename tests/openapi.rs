//! `examples/openapi`, a server made at run time from an OpenAPI document, run over stdio
//! against a pet store served by this test: one tool per operation with its schema, calls
//! that reach the API and bring its answers back, invalid arguments refused before any
//! request, and parameters that cannot change the path.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;

use mcp_tests::{StdioServer, TIMEOUT, assert_valid, workspace_binary};
use serde_json::{Value, json};

const VERSION: &str = "2025-11-25";

fn binary() -> &'static Path {
    static BINARY: OnceLock<std::path::PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| workspace_binary("openapi"))
}

/// A request the pet store received.
#[derive(Clone, Debug, PartialEq)]
struct Seen {
    method: String,
    /// The request target exactly as sent: path and query, still percent-encoded.
    target: String,
    content_type: Option<String>,
    body: String,
}

/// A pet store at `http://127.0.0.1:PORT/v1` on a thread of the test, answering one request
/// per connection from an in-memory list and recording every request before it answers, so
/// a tool call's response arrives after its request is recorded. Dropped, it stops its
/// thread and waits for it.
struct Petstore {
    address: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Petstore {
    /// A store holding Rex the dog (id 1) and Tom the cat (id 2).
    fn start() -> Petstore {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the pet store");
        let address = listener.local_addr().expect("the pet store's address");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (seen, stop) = (Arc::clone(&seen), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut pets = vec![
                    json!({"id": "1", "name": "Rex", "tag": "dog"}),
                    json!({"id": "2", "name": "Tom", "tag": "cat"}),
                ];
                let mut next_id = 3;
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let Some(request) = read_request(&stream) else {
                        continue;
                    };
                    seen.lock().unwrap().push(request.clone());
                    let (status, body) = answer(&request, &mut pets, &mut next_id);
                    respond(stream, status, body);
                }
            })
        };
        Petstore {
            address,
            seen,
            stop,
            thread: Some(thread),
        }
    }

    fn base_url(&self) -> String {
        format!("http://{}/v1", self.address)
    }

    /// The requests received since the last call.
    fn take_seen(&self) -> Vec<Seen> {
        std::mem::take(&mut *self.seen.lock().unwrap())
    }
}

impl Drop for Petstore {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the thread waiting in `accept`; it sees `stop` and returns.
        let _ = TcpStream::connect(self.address);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Reads one HTTP/1.1 request (headers and a `Content-Length` body), or `None` if the
/// connection ends first or says nothing for [`TIMEOUT`].
fn read_request(stream: &TcpStream) -> Option<Seen> {
    stream.set_read_timeout(Some(TIMEOUT)).ok()?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut words = line.split_whitespace();
    let (method, target) = (words.next()?.to_owned(), words.next()?.to_owned());
    let (mut length, mut content_type) = (0, None);
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).ok()? == 0 {
            return None;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().ok()?,
            "content-type" => content_type = Some(value.trim().to_owned()),
            _ => {}
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Seen {
        method,
        target,
        content_type,
        body: String::from_utf8(body).ok()?,
    })
}

/// `%XX` sequences decoded.
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let hex = text
            .get(i + 1..i + 3)
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                decoded.push(byte);
                i += 3;
            }
            (byte, _) => {
                decoded.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

/// The pet store's answer: a status and a JSON body (none for 204).
fn answer(request: &Seen, pets: &mut Vec<Value>, next_id: &mut u32) -> (u16, Option<Value>) {
    let (path, query) = request
        .target
        .split_once('?')
        .unwrap_or((&request.target, ""));
    let query: Vec<(String, String)> = query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (decode(k), decode(v)))
        .collect();
    let param = |name: &str| {
        query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let not_found = |what: String| (404, Some(json!({"message": format!("no {what}")})));
    let segments: Vec<&str> = path.split('/').collect();
    match (request.method.as_str(), &segments[..]) {
        ("GET", ["", "v1", "pets"]) => {
            let limit = param("limit").map_or(usize::MAX, |l| l.parse().unwrap());
            let tag = param("tag");
            let listed: Vec<Value> = pets
                .iter()
                .filter(|p| tag.is_none() || p["tag"].as_str() == tag.as_deref())
                .take(limit)
                .cloned()
                .collect();
            (200, Some(Value::Array(listed)))
        }
        ("POST", ["", "v1", "pets"]) => {
            let new: Value = serde_json::from_str(&request.body).unwrap_or(Value::Null);
            let Some(name) = new["name"].as_str() else {
                return (400, Some(json!({"message": "a pet needs a name"})));
            };
            let mut pet = json!({"id": next_id.to_string(), "name": name});
            if let Some(tag) = new["tag"].as_str() {
                pet["tag"] = json!(tag);
            }
            *next_id += 1;
            pets.push(pet.clone());
            (201, Some(pet))
        }
        (method, ["", "v1", "pets", id]) => {
            let id = decode(id);
            let Some(at) = pets.iter().position(|p| p["id"] == id.as_str()) else {
                return not_found(format!("pet {id}"));
            };
            match method {
                "GET" => (200, Some(pets[at].clone())),
                "DELETE" => {
                    pets.remove(at);
                    (204, None)
                }
                _ => (405, Some(json!({"message": "GET or DELETE"}))),
            }
        }
        _ => not_found(format!("route {} {}", request.method, request.target)),
    }
}

fn respond(mut stream: TcpStream, status: u16, body: Option<Value>) {
    let reason = match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        400 => "Bad Request",
        404 => "Not Found",
        _ => "Method Not Allowed",
    };
    let mut head = format!("HTTP/1.1 {status} {reason}\r\nConnection: close\r\n");
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    if !body.is_empty() {
        head.push_str("Content-Type: application/json\r\n");
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
}

/// The example serving its pet store document, pointed at `petstore`.
fn connect(petstore: &Petstore) -> StdioServer {
    let url = petstore.base_url();
    let mut server =
        StdioServer::spawn_with_args(binary(), &[OsStr::new("--base-url"), OsStr::new(&url)]);
    server.initialize(VERSION);
    server
}

/// The result of calling `tool` with `arguments`.
fn call(server: &mut StdioServer, id: i64, tool: &str, arguments: Value) -> Value {
    server.request(
        id,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    );
    let response = server.response(id);
    assert_valid(VERSION, "CallToolResult", &response["result"]);
    response["result"].clone()
}

/// The structured result of a call that succeeded: `{"status": …, "body": …}`.
fn ok(result: &Value) -> &Value {
    assert_ne!(result["isError"], true, "{result}");
    &result["structuredContent"]
}

/// The message of a call that failed as a tool error.
fn tool_error(result: &Value) -> &str {
    assert_eq!(result["isError"], true, "{result}");
    result["content"][0]["text"].as_str().unwrap()
}

/// Ends the server by closing its standard input, as a client does, and checks it exits well.
fn finish(mut server: StdioServer) {
    server.close_stdin();
    assert!(server.wait().success());
}

#[test]
fn tools_list_has_one_tool_per_operation_with_its_schema_and_hints() {
    let petstore = Petstore::start();
    let mut server = connect(&petstore);
    server.request(1, "tools/list", json!({}));
    let listed = server.response(1);
    assert_valid(VERSION, "ListToolsResult", &listed["result"]);
    let tools: Vec<&Value> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    let tool = |name: &str| {
        *tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no tool {name} in {listed}"))
    };
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["createPet", "deletePet", "getPet", "listPets"]);

    let list = tool("listPets");
    assert_eq!(
        list["description"],
        "List the pets in the store, optionally only those with a tag."
    );
    assert_eq!(
        list["inputSchema"],
        json!({
            "type": "object",
            "properties": {
                "limit": {"type": "integer", "minimum": 1, "maximum": 100,
                          "description": "How many pets to return at most (1 to 100)."},
                "tag": {"type": "string", "description": "Only the pets with this tag."},
            },
            "additionalProperties": false,
        })
    );
    for name in ["getPet", "deletePet"] {
        let schema = &tool(name)["inputSchema"];
        assert_eq!(schema["required"], json!(["petId"]), "{name}");
        assert_eq!(schema["properties"]["petId"]["type"], "string", "{name}");
    }
    // The request body, its `$ref`s inlined, is the `body` argument.
    let create = &tool("createPet")["inputSchema"];
    assert_eq!(create["required"], json!(["body"]));
    assert_eq!(
        create["properties"]["body"],
        json!({
            "type": "object",
            "description": "The new pet.",
            "properties": {
                "name": {"type": "string", "minLength": 1, "description": "The pet's name."},
                "tag": {"type": "string", "description": "A word to group pets by, such as `cat` or `dog`."},
            },
            "required": ["name"],
            "additionalProperties": false,
        })
    );

    assert_eq!(
        list["annotations"],
        json!({"readOnlyHint": true, "idempotentHint": true})
    );
    assert_eq!(tool("getPet")["annotations"], list["annotations"]);
    assert_eq!(
        tool("deletePet")["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true})
    );
    assert_eq!(
        tool("createPet")["annotations"],
        json!({"readOnlyHint": false})
    );
    // Listing asks nothing of the API.
    assert_eq!(petstore.take_seen(), []);
    finish(server);
}

#[test]
fn calls_make_the_request_and_bring_back_the_answer() {
    let petstore = Petstore::start();
    let mut server = connect(&petstore);

    let cats = call(&mut server, 1, "listPets", json!({"tag": "cat"}));
    assert_eq!(
        ok(&cats),
        &json!({"status": 200, "body": [{"id": "2", "name": "Tom", "tag": "cat"}]})
    );
    let one = call(&mut server, 2, "listPets", json!({"limit": 1}));
    assert_eq!(ok(&one)["body"].as_array().unwrap().len(), 1);

    let created = call(
        &mut server,
        3,
        "createPet",
        json!({"body": {"name": "Nibbles", "tag": "hamster"}}),
    );
    assert_eq!(
        ok(&created),
        &json!({"status": 201, "body": {"id": "3", "name": "Nibbles", "tag": "hamster"}})
    );
    let got = call(&mut server, 4, "getPet", json!({"petId": "3"}));
    assert_eq!(ok(&got)["body"]["name"], "Nibbles");
    let deleted = call(&mut server, 5, "deletePet", json!({"petId": "3"}));
    assert_eq!(ok(&deleted), &json!({"status": 204}));

    let gone = call(&mut server, 6, "getPet", json!({"petId": "3"}));
    assert_eq!(
        tool_error(&gone),
        r#"GET /v1/pets/3: the API answered 404 Not Found: {"message":"no pet 3"}"#
    );
    let again = call(&mut server, 7, "deletePet", json!({"petId": "3"}));
    assert!(
        tool_error(&again).contains("404 Not Found"),
        "{}",
        tool_error(&again)
    );

    let seen = petstore.take_seen();
    let lines: Vec<String> = seen
        .iter()
        .map(|s| format!("{} {}", s.method, s.target))
        .collect();
    assert_eq!(
        lines,
        [
            "GET /v1/pets?tag=cat",
            "GET /v1/pets?limit=1",
            "POST /v1/pets",
            "GET /v1/pets/3",
            "DELETE /v1/pets/3",
            "GET /v1/pets/3",
            "DELETE /v1/pets/3",
        ]
    );
    assert_eq!(seen[2].content_type.as_deref(), Some("application/json"));
    assert_eq!(
        serde_json::from_str::<Value>(&seen[2].body).unwrap(),
        json!({"name": "Nibbles", "tag": "hamster"})
    );
    finish(server);
}

#[test]
fn invalid_arguments_are_refused_before_any_request_is_made() {
    let petstore = Petstore::start();
    let mut server = connect(&petstore);
    let cases = [
        (
            "listPets",
            json!({"limit": 0}),
            "invalid arguments: `limit`: 0 is less than the minimum of 1",
        ),
        (
            "listPets",
            json!({"limit": "ten"}),
            "invalid arguments: `limit`: \"ten\" is not of type \"integer\"",
        ),
        (
            "listPets",
            json!({"colour": "red"}),
            "invalid arguments: Additional properties are not allowed ('colour' was unexpected)",
        ),
        (
            "getPet",
            json!({}),
            "invalid arguments: \"petId\" is a required property",
        ),
        (
            "getPet",
            json!({"petId": 3}),
            "invalid arguments: `petId`: 3 is not of type \"string\"",
        ),
        (
            "createPet",
            json!({}),
            "invalid arguments: \"body\" is a required property",
        ),
        (
            "createPet",
            json!({"body": {"tag": "cat"}}),
            "invalid arguments: `body`: \"name\" is a required property",
        ),
        (
            "createPet",
            json!({"body": {"name": ""}}),
            "invalid arguments: `body/name`: \"\" is shorter than 1 character",
        ),
        (
            "createPet",
            json!({"body": {"name": "Rex", "owner": "me"}}),
            "invalid arguments: `body`: Additional properties are not allowed ('owner' was unexpected)",
        ),
        // Valid for the schema, but not one path segment: refused by the example itself.
        (
            "getPet",
            json!({"petId": ".."}),
            "`petId` cannot be \"..\", which would climb out of /pets/{petId}: give a petId",
        ),
        (
            "deletePet",
            json!({"petId": ""}),
            "`petId` cannot be empty: give a petId",
        ),
    ];
    for (id, (tool, arguments, expected)) in cases.into_iter().enumerate() {
        let refused = call(&mut server, id as i64 + 1, tool, arguments.clone());
        assert!(
            tool_error(&refused).starts_with(expected),
            "{tool} {arguments}: {}",
            tool_error(&refused)
        );
    }
    // Had any of them made a request, it would have been recorded before its call answered.
    assert_eq!(petstore.take_seen(), []);
    let listed = call(&mut server, 100, "listPets", json!({}));
    assert_eq!(ok(&listed)["status"], 200);
    assert_eq!(petstore.take_seen().len(), 1);
    finish(server);
}

#[test]
fn parameters_are_percent_encoded_and_cannot_change_the_path() {
    let petstore = Petstore::start();
    let mut server = connect(&petstore);
    for (id, pet_id, target) in [
        (1, "../admin", "/v1/pets/..%2Fadmin"),
        (2, "a/b", "/v1/pets/a%2Fb"),
        (3, "1?x=1#y", "/v1/pets/1%3Fx%3D1%23y"),
        (4, "%2e%2e", "/v1/pets/%252e%252e"),
    ] {
        let result = call(&mut server, id, "getPet", json!({"petId": pet_id}));
        // The store decoded one segment and found no such pet.
        assert_eq!(
            tool_error(&result),
            format!(
                r#"GET {target}: the API answered 404 Not Found: {{"message":"no pet {pet_id}"}}"#
            )
        );
        let seen = petstore.take_seen();
        assert_eq!(seen.len(), 1);
        assert_eq!(
            (seen[0].method.as_str(), seen[0].target.as_str()),
            ("GET", target)
        );
    }
    let tagged = call(&mut server, 5, "listPets", json!({"tag": "cat&limit=0 x"}));
    assert_eq!(ok(&tagged), &json!({"status": 200, "body": []}));
    assert_eq!(
        petstore.take_seen()[0].target,
        "/v1/pets?tag=cat%26limit%3D0%20x"
    );
    finish(server);
}

#[test]
fn an_api_that_is_not_there_is_a_tool_error_and_https_is_refused_at_start() {
    // A port nothing listens on any more.
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let url = format!("http://{closed}/v1");
    let mut server =
        StdioServer::spawn_with_args(binary(), &[OsStr::new("--base-url"), OsStr::new(&url)]);
    server.initialize(VERSION);
    let refused = call(&mut server, 1, "listPets", json!({}));
    assert!(
        tool_error(&refused).starts_with(&format!(
            "GET /v1/pets: cannot connect to the API at {url} ("
        )),
        "{}",
        tool_error(&refused)
    );
    finish(server);

    let https = Command::new(binary())
        .args(["--base-url", "https://127.0.0.1:8443/v1"])
        .stdin(Stdio::null())
        .output()
        .expect("run the example");
    assert!(!https.status.success());
    let stderr = String::from_utf8_lossy(&https.stderr);
    assert!(
        stderr.contains("is https, and this example speaks plain HTTP only"),
        "{stderr}"
    );
}
