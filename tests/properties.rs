//! Property tests, the short versions of the fuzz targets in `fuzz/` (256 cases each): the
//! dispatch of a stream of messages, URI-template matching, and the roots fence.

use std::os::unix::fs::symlink;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use mcp_runtime::prelude::*;
use mcp_runtime::testing::Dispatcher;
use mcp_runtime::{Root, Roots, UriTemplate};
use proptest::prelude::*;
use serde_json::{Value, json};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Dispatch

/// Add two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
}

/// Answer after waiting once.
#[tool]
async fn later() -> &'static str {
    mcp_runtime::tokio::task::yield_now().await;
    "later"
}

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        mcp_runtime::server!()
            .auto_register(false)
            .tools(mcp_runtime::tools![add, later])
            .build()
            .expect("the server builds")
    })
}

/// One message of a stream, and what it must be answered with.
#[derive(Clone, Debug)]
enum Message {
    /// A valid request: one answer, a result, with its id.
    Call,
    /// A request for a method nobody serves: one -32601, with its id.
    Unknown,
    /// A notification: no answer.
    Notification,
    /// A response to nothing: no answer.
    Response,
    /// A valid request cut short: one -32700, to no id.
    Truncated(usize),
    /// Bytes that cannot start JSON (a control byte first): one -32700, to no id.
    Garbage(Vec<u8>),
}

fn message() -> impl Strategy<Value = Message> {
    prop_oneof![
        3 => Just(Message::Call),
        1 => Just(Message::Unknown),
        1 => Just(Message::Notification),
        1 => Just(Message::Response),
        1 => (1usize..60).prop_map(Message::Truncated),
        1 => proptest::collection::vec(any::<u8>(), 0..64).prop_map(|mut b| {
            b.retain(|&c| c != b'\n');
            b.insert(0, 0x01);
            Message::Garbage(b)
        }),
    ]
}

fn call(id: &Value, n: usize) -> String {
    let (name, arguments) = if n.is_multiple_of(2) {
        ("add", json!({"a": n, "b": 1}))
    } else {
        ("later", json!({}))
    };
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
    .to_string()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn every_request_is_answered_once_and_nothing_else_is(
        messages in proptest::collection::vec(message(), 1..24),
        string_ids in any::<bool>(),
    ) {
        let mut connection = Dispatcher::new(server());
        let mut frames = connection.dispatch(
            br#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"p","version":"1"}}}"#,
        );
        let mut expected: Vec<(Value, Option<i64>)> = vec![(json!("init"), None)];
        let mut parse_errors = 0;
        for (n, m) in messages.iter().enumerate() {
            let id = if string_ids { json!(format!("r{n}")) } else { json!(n) };
            let line = match m {
                Message::Call => {
                    expected.push((id.clone(), None));
                    call(&id, n)
                }
                Message::Unknown => {
                    expected.push((id.clone(), Some(-32601)));
                    json!({"jsonrpc": "2.0", "id": id, "method": "no/such/method"}).to_string()
                }
                Message::Notification => r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#.into(),
                Message::Response => json!({"jsonrpc": "2.0", "id": 1000 + n, "result": {}}).to_string(),
                Message::Truncated(cut) => {
                    parse_errors += 1;
                    let whole = call(&id, n);
                    whole[..(*cut).min(whole.len() - 1)].to_owned()
                }
                Message::Garbage(bytes) => {
                    parse_errors += 1;
                    frames.extend(connection.dispatch(bytes));
                    continue;
                }
            };
            frames.extend(connection.dispatch(line.as_bytes()));
        }
        frames.extend(connection.finish());
        let answers: Vec<Value> = frames
            .iter()
            .map(|f| serde_json::from_slice(f).expect("every frame is JSON"))
            .filter(|v: &Value| v.get("method").is_none())
            .collect();
        for (id, error) in &expected {
            let mine: Vec<&Value> = answers.iter().filter(|a| &a["id"] == id).collect();
            prop_assert_eq!(mine.len(), 1, "id {} answered {:?}", id, mine);
            match error {
                Some(code) => prop_assert_eq!(&mine[0]["error"]["code"], &json!(code)),
                None => prop_assert!(mine[0].get("result").is_some(), "{}", mine[0]),
            }
        }
        let nulls: Vec<&Value> = answers.iter().filter(|a| a["id"].is_null()).collect();
        prop_assert_eq!(nulls.len(), parse_errors, "{:?}", nulls);
        prop_assert!(nulls.iter().all(|a| a["error"]["code"] == -32700), "{:?}", nulls);
        prop_assert_eq!(answers.len(), expected.len() + parse_errors, "{:?}", answers);
    }
}

// ---------------------------------------------------------------------------------------------
// URI templates

#[derive(Clone, Debug)]
enum Piece {
    Literal(String),
    Simple(String),
    Reserved(String),
}

fn piece() -> impl Strategy<Value = Piece> {
    let literal = "[a-z:/.#?-]{1,4}";
    let value = "[a-zA-Z0-9 ._~%/éü+&=-]{0,6}";
    prop_oneof![
        literal.prop_map(Piece::Literal),
        value.prop_map(Piece::Simple),
        value.prop_map(Piece::Reserved),
    ]
}

/// RFC 6570 expansion: `{var}` keeps unreserved characters, `{+var}` reserved ones too.
fn encode(value: &str, reserved: bool) -> String {
    let mut out = String::new();
    for b in value.bytes() {
        let keep = b.is_ascii_alphanumeric()
            || b"-._~".contains(&b)
            || (reserved && b":/?#[]@!$&'()*+,;=".contains(&b));
        if keep {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn a_template_matches_its_own_expansion(
        pieces in proptest::collection::vec(piece(), 1..6),
        query in proptest::collection::vec(proptest::option::of("[a-z0-9 +&=%]{0,5}"), 0..3),
    ) {
        let (mut template, mut uri, mut values) = (String::new(), String::new(), Vec::new());
        let mut fit = true;
        let mut last_variable = false;
        for (i, p) in pieces.iter().enumerate() {
            match p {
                Piece::Literal(l) => {
                    template.push_str(l);
                    uri.push_str(l);
                    last_variable = false;
                }
                Piece::Simple(v) | Piece::Reserved(v) if !last_variable => {
                    let reserved = matches!(p, Piece::Reserved(_));
                    template.push_str(&format!("{{{}v{i}}}", if reserved { "+" } else { "" }));
                    // Reserved expansion leaves `%`, `?` and `#` as they are: left out here.
                    let v = if reserved { v.replace(['%', '?', '#'], "") } else { v.clone() };
                    uri.push_str(&encode(&v, reserved));
                    fit &= !v.is_empty() && (reserved || (!v.contains('/') && v != "." && v != ".."));
                    values.push((format!("v{i}"), v));
                    last_variable = true;
                }
                _ => {}
            }
        }
        if !query.is_empty() {
            let names: Vec<String> = (0..query.len()).map(|j| format!("q{j}")).collect();
            template.push_str(&format!("{{?{}}}", names.join(",")));
            let mut first = true;
            for (name, value) in names.iter().zip(&query) {
                if let Some(value) = value {
                    uri.push(if first { '?' } else { '&' });
                    first = false;
                    uri.push_str(&format!("{name}={}", encode(value, false)));
                    values.push((name.clone(), value.clone()));
                }
            }
        }
        let t = UriTemplate::parse(&template).expect("a well-formed template");
        match t.matches(&uri) {
            Some(vars) => {
                for (name, value) in vars.iter() {
                    if template.contains(&format!("{{{name}}}")) {
                        prop_assert!(!value.is_empty() && !value.contains('/') && value != "." && value != "..",
                            "{} bound {} to {:?} in {:?}", template, name, value, uri);
                    }
                }
            }
            None => prop_assert!(!fit, "{} does not match its expansion {:?} of {:?}", template, uri, values),
        }
    }

    #[test]
    fn a_simple_variable_never_binds_a_value_that_leaves_its_segment(uri in "f://[a-z./%2EeFf]{0,12}(/x)?") {
        let t = UriTemplate::parse("f://{name}/x").expect("a template");
        if let Some(vars) = t.matches(&uri) {
            let value = vars.get("name").unwrap_or_default();
            prop_assert!(!value.is_empty() && !value.contains('/') && value != "." && value != "..",
                "{:?} bound {:?}", uri, value);
        }
    }
}

#[test]
fn a_percent_sign_followed_by_a_plus_and_a_digit_is_no_escape() {
    // RFC 3986: pct-encoded = "%" HEXDIG HEXDIG; `u8::from_str_radix` also takes "+1".
    let t = UriTemplate::parse("f://{name}").expect("a template");
    assert_eq!(t.matches("f://%+1"), None);
    assert_eq!(t.matches("f://a%+Fb"), None);
}

#[test]
fn a_query_expression_followed_by_more_is_refused() {
    // Found by the `uri_template` fuzz target: `{?q}\0v{5}` parsed, and matched "".
    for template in ["s{?q}x{y}", "{?q1x0x0}\0v{5}"] {
        assert!(UriTemplate::parse(template).is_err(), "{template:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// The roots fence

struct Fixture {
    root: PathBuf,
    uri: String,
}

/// A root with a subdirectory and links that stay in it, lead out, dangle and loop, beside a
/// directory outside it and a sibling whose name extends the root's.
fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        // A static is never dropped: the fixture lives in the build's scratch directory,
        // made afresh by each run, rather than in the system's.
        let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("properties-fence");
        let _ = std::fs::remove_dir_all(&base);
        for dir in ["root/sub", "root-evil", "outside"] {
            std::fs::create_dir_all(base.join(dir)).expect("a directory");
        }
        std::fs::write(base.join("root/file.txt"), "x").expect("a file");
        std::fs::write(base.join("outside/secret.txt"), "x").expect("a file");
        for (to, at) in [
            ("sub", "root/in"),
            ("../outside", "root/out"),
            ("/etc", "root/abs"),
            ("../nowhere", "root/dangling"),
            ("loop", "root/loop"),
            ("../root-evil", "root/evil"),
        ] {
            symlink(to, base.join(at)).expect("a link");
        }
        let root = base.join("root").canonicalize().expect("the root");
        let uri = format!("file://{}", root.display());
        Fixture { root, uri }
    })
}

fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("sub".to_owned()),
        Just("in".to_owned()),
        Just("out".to_owned()),
        Just("abs".to_owned()),
        Just("dangling".to_owned()),
        Just("loop".to_owned()),
        Just("evil".to_owned()),
        Just("..".to_owned()),
        Just(".".to_owned()),
        Just(String::new()),
        Just("%2e%2e".to_owned()),
        Just("..\\..".to_owned()),
        Just("file.txt".to_owned()),
        "[a-zA-Z0-9._ %-]{1,8}",
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn a_resolved_path_always_lies_inside_the_root(
        segments in proptest::collection::vec(segment(), 1..6),
        start in 0..4usize,
    ) {
        let f = fixture();
        let relative = segments.join("/");
        let path = match start {
            0 => relative,
            1 => format!("{}/{relative}", f.root.display()),
            2 => format!("{}/{relative}", f.uri),
            _ => format!("{}/../outside/{relative}", f.root.display()),
        };
        let roots = Roots::new(vec![Root { uri: f.uri.clone(), name: None }]);
        if let Ok(resolved) = roots.resolve(&path) {
            let place = resolved.as_path();
            prop_assert!(place.is_absolute());
            prop_assert!(place.components().all(|c| !matches!(c, Component::CurDir | Component::ParentDir)));
            prop_assert_eq!(resolved.root(), f.root.as_path());
            prop_assert!(place.starts_with(&f.root), "{:?} → {:?}", path, place);
            prop_assert!(real_location(place).starts_with(&f.root), "{:?} → {:?} leads out", path, place);
        }
    }
}

/// The path with the links of its longest existing prefix resolved.
fn real_location(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut out = real;
            out.extend(rest.iter().rev());
            return out;
        }
        match (
            existing.file_name().map(ToOwned::to_owned),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}
