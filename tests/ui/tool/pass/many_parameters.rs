//! A tool of 150 parameters (their values are read into a balanced tree, so its depth stays
//! far below rustc's recursion limit), and tools in a crate that forbids `dead_code`: the
//! struct that describes a tool's parameters is never built, and must not need an `allow`.

#![forbid(dead_code)]

use mcp_runtime::prelude::*;
use mcp_runtime::serde_json::{Value, json};

/// Adds its 150 numbers.
#[tool]
#[rustfmt::skip]
#[allow(clippy::too_many_arguments)] // the point of this tool
fn many(
    p0: u32,
    p1: u32,
    p2: u32,
    p3: u32,
    p4: u32,
    p5: u32,
    p6: u32,
    p7: u32,
    p8: u32,
    p9: u32,
    p10: u32,
    p11: u32,
    p12: u32,
    p13: u32,
    p14: u32,
    p15: u32,
    p16: u32,
    p17: u32,
    p18: u32,
    p19: u32,
    p20: u32,
    p21: u32,
    p22: u32,
    p23: u32,
    p24: u32,
    p25: u32,
    p26: u32,
    p27: u32,
    p28: u32,
    p29: u32,
    p30: u32,
    p31: u32,
    p32: u32,
    p33: u32,
    p34: u32,
    p35: u32,
    p36: u32,
    p37: u32,
    p38: u32,
    p39: u32,
    p40: u32,
    p41: u32,
    p42: u32,
    p43: u32,
    p44: u32,
    p45: u32,
    p46: u32,
    p47: u32,
    p48: u32,
    p49: u32,
    p50: u32,
    p51: u32,
    p52: u32,
    p53: u32,
    p54: u32,
    p55: u32,
    p56: u32,
    p57: u32,
    p58: u32,
    p59: u32,
    p60: u32,
    p61: u32,
    p62: u32,
    p63: u32,
    p64: u32,
    p65: u32,
    p66: u32,
    p67: u32,
    p68: u32,
    p69: u32,
    p70: u32,
    p71: u32,
    p72: u32,
    p73: u32,
    p74: u32,
    p75: u32,
    p76: u32,
    p77: u32,
    p78: u32,
    p79: u32,
    p80: u32,
    p81: u32,
    p82: u32,
    p83: u32,
    p84: u32,
    p85: u32,
    p86: u32,
    p87: u32,
    p88: u32,
    p89: u32,
    p90: u32,
    p91: u32,
    p92: u32,
    p93: u32,
    p94: u32,
    p95: u32,
    p96: u32,
    p97: u32,
    p98: u32,
    p99: u32,
    p100: u32,
    p101: u32,
    p102: u32,
    p103: u32,
    p104: u32,
    p105: u32,
    p106: u32,
    p107: u32,
    p108: u32,
    p109: u32,
    p110: u32,
    p111: u32,
    p112: u32,
    p113: u32,
    p114: u32,
    p115: u32,
    p116: u32,
    p117: u32,
    p118: u32,
    p119: u32,
    p120: u32,
    p121: u32,
    p122: u32,
    p123: u32,
    p124: u32,
    p125: u32,
    p126: u32,
    p127: u32,
    p128: u32,
    p129: u32,
    p130: u32,
    p131: u32,
    p132: u32,
    p133: u32,
    p134: u32,
    p135: u32,
    p136: u32,
    p137: u32,
    p138: u32,
    p139: u32,
    p140: u32,
    p141: u32,
    p142: u32,
    p143: u32,
    p144: u32,
    p145: u32,
    p146: u32,
    p147: u32,
    p148: u32,
    p149: u32,
) -> u64 {
    [p0, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, p19, p20, p21, p22, p23, p24, p25, p26, p27, p28, p29, p30, p31, p32, p33, p34, p35, p36, p37, p38, p39, p40, p41, p42, p43, p44, p45, p46, p47, p48, p49, p50, p51, p52, p53, p54, p55, p56, p57, p58, p59, p60, p61, p62, p63, p64, p65, p66, p67, p68, p69, p70, p71, p72, p73, p74, p75, p76, p77, p78, p79, p80, p81, p82, p83, p84, p85, p86, p87, p88, p89, p90, p91, p92, p93, p94, p95, p96, p97, p98, p99, p100, p101, p102, p103, p104, p105, p106, p107, p108, p109, p110, p111, p112, p113, p114, p115, p116, p117, p118, p119, p120, p121, p122, p123, p124, p125, p126, p127, p128, p129, p130, p131, p132, p133, p134, p135, p136, p137, p138, p139, p140, p141, p142, p143, p144, p145, p146, p147, p148, p149]
        .iter()
        .map(|&p| u64::from(p))
        .sum()
}

/// Takes nothing.
#[tool]
fn nothing() -> &'static str {
    "nothing"
}

/// Labels a number, with a default.
#[tool]
fn labelled(r#type: String, n: i64, #[default = 7] offset: i64) -> String {
    format!("{type} {}", n + offset)
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap()
}

#[mcp_runtime::main]
async fn main() {
    let server = mcp_runtime::server!().build().unwrap();
    let client = server.connect_memory();
    client.initialize().await.unwrap();
    let call = |name: &'static str, arguments: Value| {
        let client = &client;
        async move {
            client
                .request("tools/call", json!({"name": name, "arguments": arguments}))
                .await
                .unwrap()
        }
    };

    let numbers = |left_out: Option<u32>| -> Value {
        (0..150u32)
            .filter(|&i| Some(i) != left_out)
            .map(|i| (format!("p{i}"), json!(i)))
            .collect::<mcp_runtime::serde_json::Map<_, _>>()
            .into()
    };
    let all = call("many", numbers(None)).await;
    assert_eq!(text(&all), "11175", "{all}");
    let missing = call("many", numbers(Some(97))).await;
    assert_eq!(missing["isError"], true, "{missing}");
    assert!(text(&missing).contains("missing field `p97`"), "{missing}");

    assert_eq!(text(&call("nothing", json!({})).await), "nothing");
    let labelled = call("labelled", json!({"type": "t", "n": 1})).await;
    assert_eq!(text(&labelled), "t 8", "{labelled}");
    let unknown = call("labelled", json!({"type": "t", "n": 1, "ofset": 2})).await;
    assert!(text(&unknown).contains("`offset`"), "{unknown}");
}
