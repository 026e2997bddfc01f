//! Criterion micro-benchmarks of mcp-runtime's dispatch core, without processes or pipes.
//!
//! The least-overhead public way into the core is the in-memory client: a pre-serialised
//! message goes in with `MemoryClient::send_raw` and its response comes back from
//! `MemoryClient::next_message` (a response to a raw message is not matched to a waiter).
//! Each iteration is therefore: channel → parse and route → spawn and run the call → serialise
//! the result → channel, plus the client's own parse of the response into a `serde_json::Value`,
//! which `client/parse-*` measures alone so that it can be subtracted.
//!
//! Everything runs on a current-thread Tokio runtime: these figures are the CPU cost of the
//! path, without the thread hand-offs of the stdio transport (which `mcp-load` measures).

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_runtime::prelude::*;
use mcp_runtime::{MemoryClient, Server};
use std::hint::black_box;
use std::time::Duration;
use tokio::runtime::Runtime;

/// Return the text unchanged.
#[tool]
fn echo(
    /// The text to return.
    text: String,
) -> String {
    text
}

/// Add two integers (wrapping on overflow).
#[tool]
fn add(
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
) -> i64 {
    a.wrapping_add(b)
}

/// The offset the state-taking tools add: nothing, so they answer as `add` does.
struct Offset {
    by: i64,
}

/// Add two integers and the server's offset (wrapping on overflow).
#[tool]
fn add_state(
    offset: State<Offset>,
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
) -> i64 {
    a.wrapping_add(b).wrapping_add(offset.by)
}

/// The same as a toolbox: `&self` is the value the server was given.
struct Adder {
    by: i64,
}

#[toolbox]
impl Adder {
    /// Add two integers and this adder's offset (wrapping on overflow).
    #[tool]
    fn add_self(
        &self,
        /// The first addend.
        a: i64,
        /// The second addend.
        b: i64,
    ) -> i64 {
        a.wrapping_add(b).wrapping_add(self.by)
    }
}

/// Declares catalogue tools of a typical shape: two described parameters, one optional.
macro_rules! catalogue_tools {
    ($($name:ident)*) => {
        $(
            /// Look up the records of one collection that match a query, newest first.
            #[tool(annotations(read_only))]
            fn $name(
                /// What to look for: words, a quoted phrase, or `field:value` pairs.
                query: String,
                /// How many records to return at most; 20 when absent.
                limit: Option<u32>,
            ) -> String {
                format!("{query} {limit:?}")
            }
        )*

        /// The hundred catalogue tools, for explicit registration.
        fn catalogue() -> Vec<&'static mcp_runtime::ToolDescriptor> {
            mcp_runtime::tools![$($name),*]
        }
    };
}

catalogue_tools! {
    tool_00 tool_01 tool_02 tool_03 tool_04 tool_05 tool_06 tool_07 tool_08 tool_09
    tool_10 tool_11 tool_12 tool_13 tool_14 tool_15 tool_16 tool_17 tool_18 tool_19
    tool_20 tool_21 tool_22 tool_23 tool_24 tool_25 tool_26 tool_27 tool_28 tool_29
    tool_30 tool_31 tool_32 tool_33 tool_34 tool_35 tool_36 tool_37 tool_38 tool_39
    tool_40 tool_41 tool_42 tool_43 tool_44 tool_45 tool_46 tool_47 tool_48 tool_49
    tool_50 tool_51 tool_52 tool_53 tool_54 tool_55 tool_56 tool_57 tool_58 tool_59
    tool_60 tool_61 tool_62 tool_63 tool_64 tool_65 tool_66 tool_67 tool_68 tool_69
    tool_70 tool_71 tool_72 tool_73 tool_74 tool_75 tool_76 tool_77 tool_78 tool_79
    tool_80 tool_81 tool_82 tool_83 tool_84 tool_85 tool_86 tool_87 tool_88 tool_89
    tool_90 tool_91 tool_92 tool_93 tool_94 tool_95 tool_96 tool_97 tool_98 tool_99
}

const ECHO_CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"call 1: the quick brown fox jumps over the lazy dog"}}}"#;
const ADD_CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":20,"b":22}}}"#;
const ADD_STATE_CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_state","arguments":{"a":20,"b":22}}}"#;
const ADD_SELF_CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_self","arguments":{"a":20,"b":22}}}"#;
const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
const LIST_TOOLS: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a Tokio runtime")
}

/// A connected, initialised client of a server with these tools.
fn client(rt: &Runtime, tools: Vec<&'static mcp_runtime::ToolDescriptor>) -> MemoryClient {
    connect(
        rt,
        Server::builder("mcp-bench", "0.0.0")
            .auto_register(false)
            .tools(tools),
    )
}

/// A connected, initialised client of the server `builder` builds.
fn connect(rt: &Runtime, builder: mcp_runtime::ServerBuilder) -> MemoryClient {
    let server = builder.build().expect("a valid catalogue");
    rt.block_on(async {
        let client = server.connect_memory();
        client.initialize().await.expect("initialize");
        client
    })
}

/// Sends one raw message and waits for the message the server answers with.
async fn round_trip(client: &MemoryClient, message: &str) -> serde_json::Value {
    client.send_raw(message).await;
    client.next_message().await.expect("a response")
}

fn dispatch(c: &mut Criterion) {
    let rt = runtime();
    // The tools that take state beside the ones that do not, in one server.
    let client = connect(
        &rt,
        Server::builder("mcp-bench", "0.0.0")
            .auto_register(false)
            .tools(mcp_runtime::tools![echo, add, add_state])
            .state(Offset { by: 0 })
            .toolbox(Adder { by: 0 }),
    );
    let reply = rt.block_on(round_trip(&client, ECHO_CALL));
    assert_eq!(
        reply["result"]["content"][0]["text"],
        "call 1: the quick brown fox jumps over the lazy dog",
        "{reply}"
    );
    for call in [ADD_CALL, ADD_STATE_CALL, ADD_SELF_CALL] {
        let reply = rt.block_on(round_trip(&client, call));
        assert_eq!(reply["result"]["content"][0]["text"], "42", "{reply}");
    }
    let mut group = c.benchmark_group("dispatch");
    for (name, message) in [
        ("ping", PING),
        ("tools/call echo", ECHO_CALL),
        ("tools/call add", ADD_CALL),
        ("tools/call add, State<T>", ADD_STATE_CALL),
        ("tools/call add, toolbox &self", ADD_SELF_CALL),
    ] {
        group.bench_function(name, |b| {
            b.to_async(&rt)
                .iter(|| round_trip(&client, black_box(message)));
        });
    }
    group.finish();

    // The same call through three layers that only pass it on.
    let layered = connect(
        &rt,
        Server::builder("mcp-bench", "0.0.0")
            .auto_register(false)
            .tools(mcp_runtime::tools![add])
            .layer(pass_on())
            .layer(pass_on())
            .layer(pass_on()),
    );
    let reply = rt.block_on(round_trip(&layered, ADD_CALL));
    assert_eq!(reply["result"]["content"][0]["text"], "42", "{reply}");
    let mut group = c.benchmark_group("dispatch");
    group.bench_function("tools/call add, three no-op layers", |b| {
        b.to_async(&rt)
            .iter(|| round_trip(&layered, black_box(ADD_CALL)));
    });
    group.finish();

    // The same call counted and timed in the server's metrics (a metrics route is on).
    let server = Server::builder("mcp-bench", "0.0.0")
        .auto_register(false)
        .tools(mcp_runtime::tools![add])
        .build()
        .expect("the server builds");
    server.metrics().enable();
    let measured = rt.block_on(async {
        let client = server.connect_memory();
        client.initialize().await.expect("initialize");
        client
    });
    let reply = rt.block_on(round_trip(&measured, ADD_CALL));
    assert_eq!(reply["result"]["content"][0]["text"], "42", "{reply}");
    let mut group = c.benchmark_group("dispatch");
    group.bench_function("tools/call add, metrics kept", |b| {
        b.to_async(&rt)
            .iter(|| round_trip(&measured, black_box(ADD_CALL)));
    });
    group.finish();
}

/// A layer that passes every request on.
fn pass_on() -> impl mcp_runtime::middleware::Layer {
    mcp_runtime::middleware::from_fn(
        |request: mcp_runtime::middleware::McpRequest, next: mcp_runtime::middleware::Next| {
            next.run(request)
        },
    )
}

fn list(c: &mut Criterion) {
    let rt = runtime();
    let client = client(&rt, catalogue());
    let reply = rt.block_on(round_trip(&client, LIST_TOOLS));
    let tools = reply["result"]["tools"].as_array().map_or(0, Vec::len);
    assert_eq!(tools, 100, "{reply}");
    let mut group = c.benchmark_group("tools/list");
    group.bench_function("100 tools", |b| {
        b.to_async(&rt)
            .iter(|| round_trip(&client, black_box(LIST_TOOLS)));
    });
    group.finish();
}

/// What the in-memory client adds to each round trip: its parse of the response into a
/// `Value`. Subtract it from the figures above to get the server's own cost.
fn client_overhead(c: &mut Criterion) {
    let rt = runtime();
    let echo_reply = serde_json::to_vec(&rt.block_on(round_trip(
        &client(&rt, mcp_runtime::tools![echo]),
        ECHO_CALL,
    )))
    .expect("serialisable");
    let list_reply =
        serde_json::to_vec(&rt.block_on(round_trip(&client(&rt, catalogue()), LIST_TOOLS)))
            .expect("serialisable");
    let mut group = c.benchmark_group("client");
    group.bench_function("parse echo reply", |b| {
        b.iter(|| serde_json::from_slice::<serde_json::Value>(black_box(&echo_reply)));
    });
    group.bench_function(
        format!("parse 100-tool list reply ({} bytes)", list_reply.len()),
        |b| b.iter(|| serde_json::from_slice::<serde_json::Value>(black_box(&list_reply))),
    );
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = config();
    targets = dispatch, list, client_overhead
}
criterion_main!(benches);
