//! Reading a message that nests too deep to be parsed: a JSON syntax check without recursion
//! (a stack of brackets, not of calls), which also notes what the top-level object holds, so
//! that the refusal can be what JSON-RPC asks for — a parse error for text that is not JSON,
//! an invalid request answered to its id, and nothing at all for a notification or a
//! response.

use std::ops::Range;

/// What a deeply nested message is, as far as its top level tells.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct TopLevel {
    /// The message is a JSON object (a batch is an array).
    pub object: bool,
    /// Where the text of its `id` is.
    pub id: Option<Range<usize>>,
    /// It has a `method`: a request, or without `id` a notification.
    pub method: bool,
    /// It has a `result` or an `error`: a response.
    pub answer: bool,
}

/// Checks that `bytes` are one JSON value, and reads its top level; `None` when the text is
/// not JSON.
pub(crate) fn scan(bytes: &[u8]) -> Option<TopLevel> {
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Next {
        Value,
        ValueOrClose,
        Key,
        KeyOrClose,
        Colon,
        CommaOrClose,
    }
    let mut top = TopLevel::default();
    let mut open: Vec<u8> = Vec::new();
    let mut next = Next::Value;
    let mut key: Option<Range<usize>> = None;
    let mut value_start = 0;
    let mut i = skip_space(bytes, 0);
    top.object = bytes.get(i) == Some(&b'{');
    loop {
        i = skip_space(bytes, i);
        let &b = bytes.get(i)?;
        // Where a value ends, the value of a top-level member may have ended with it.
        let mut ended = false;
        match next {
            Next::Value | Next::ValueOrClose => {
                if next == Next::ValueOrClose && b == b']' {
                    open.pop();
                    i += 1;
                    ended = true;
                } else {
                    if open.len() == 1 && open[0] == b'{' {
                        value_start = i;
                    }
                    match b {
                        b'{' => {
                            open.push(b'{');
                            next = Next::KeyOrClose;
                            i += 1;
                        }
                        b'[' => {
                            open.push(b'[');
                            next = Next::ValueOrClose;
                            i += 1;
                        }
                        b'"' => {
                            i = skip_string(bytes, i)?;
                            ended = true;
                        }
                        b't' => (i, ended) = (skip_word(bytes, i, b"true")?, true),
                        b'f' => (i, ended) = (skip_word(bytes, i, b"false")?, true),
                        b'n' => (i, ended) = (skip_word(bytes, i, b"null")?, true),
                        b'-' | b'0'..=b'9' => (i, ended) = (skip_number(bytes, i)?, true),
                        _ => return None,
                    }
                }
            }
            Next::Key | Next::KeyOrClose => {
                if next == Next::KeyOrClose && b == b'}' {
                    open.pop();
                    i += 1;
                    ended = true;
                } else if b == b'"' {
                    let end = skip_string(bytes, i)?;
                    if open.len() == 1 {
                        key = Some(i + 1..end - 1);
                    }
                    i = end;
                    next = Next::Colon;
                } else {
                    return None;
                }
            }
            Next::Colon => {
                if b != b':' {
                    return None;
                }
                i += 1;
                next = Next::Value;
            }
            Next::CommaOrClose => match (b, open.last()) {
                (b',', Some(b'{')) => (i, next) = (i + 1, Next::Key),
                (b',', Some(b'[')) => (i, next) = (i + 1, Next::Value),
                (b'}', Some(b'{')) | (b']', Some(b'[')) => {
                    open.pop();
                    i += 1;
                    ended = true;
                }
                _ => return None,
            },
        }
        if ended {
            if open.is_empty() {
                // One value, then nothing but white space.
                return (skip_space(bytes, i) == bytes.len()).then_some(top);
            }
            if open.len() == 1
                && open[0] == b'{'
                && let Some(k) = key.take()
            {
                match &bytes[k] {
                    b"id" => top.id = Some(value_start..i),
                    b"method" => top.method = true,
                    b"result" | b"error" => top.answer = true,
                    _ => {}
                }
            }
            next = Next::CommaOrClose;
        }
    }
}

fn skip_space(bytes: &[u8], mut i: usize) -> usize {
    while bytes
        .get(i)
        .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    {
        i += 1;
    }
    i
}

/// Past the string starting at `i` (its opening quote), escapes and all.
fn skip_string(bytes: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        match *bytes.get(j)? {
            b'"' => return Some(j + 1),
            b'\\' => match *bytes.get(j + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => j += 2,
                b'u' => {
                    let hex = bytes.get(j + 2..j + 6)?;
                    if !hex.iter().all(u8::is_ascii_hexdigit) {
                        return None;
                    }
                    j += 6;
                }
                _ => return None,
            },
            0..=0x1f => return None,
            _ => j += 1,
        }
    }
}

fn skip_word(bytes: &[u8], i: usize, word: &[u8]) -> Option<usize> {
    bytes[i..].starts_with(word).then_some(i + word.len())
}

/// Past the number at `i`: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
fn skip_number(bytes: &[u8], mut i: usize) -> Option<usize> {
    let digits = |i: usize| {
        let n = bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
        (n > 0).then_some(i + n)
    };
    if bytes.get(i) == Some(&b'-') {
        i += 1;
    }
    i = match bytes.get(i)? {
        b'0' => i + 1,
        b'1'..=b'9' => digits(i)?,
        _ => return None,
    };
    if bytes.get(i) == Some(&b'.') {
        i = digits(i + 1)?;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        i = digits(i)?;
    }
    Some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(text: &str) -> bool {
        scan(text.as_bytes()).is_some()
    }

    #[test]
    fn json_is_told_from_what_is_not() {
        for ok in [
            "{}",
            "[]",
            " [1, -2.5e+3, \"a\\\"b\\u00e9\", true, false, null, {\"k\": [{}]}] ",
            "0",
            "\"x\"",
        ] {
            assert!(valid(ok), "{ok}");
        }
        for bad in [
            "",
            "[",
            "[1,]",
            "{\"a\"}",
            "{\"a\":}",
            "{a:1}",
            "01",
            "1.",
            "-",
            "[1 2]",
            "{}}",
            "\"\\x\"",
            "\"\u{1}\"",
            "tru",
            "[]x",
            "{\"a\":1,}",
            "\"\\u12g4\"",
        ] {
            assert!(!valid(bad), "{bad:?}");
        }
        assert!(!valid(&"[".repeat(100_000)));
        assert!(valid(&("[".repeat(100_000) + &"]".repeat(100_000))));
    }

    #[test]
    fn the_top_level_members_are_noted_at_any_depth_below() {
        let deep = "[".repeat(1000) + &"]".repeat(1000);
        let request = format!(r#"{{"jsonrpc":"2.0","method":"x","params":{{"a":{deep}}},"id":7}}"#);
        let top = scan(request.as_bytes()).unwrap();
        assert!(top.object && top.method && !top.answer);
        assert_eq!(&request[top.id.unwrap()], "7");
        let response = format!(r#"{{"id":"a","result":{deep}}}"#);
        let top = scan(response.as_bytes()).unwrap();
        assert!(top.answer && !top.method);
        assert_eq!(&response[top.id.unwrap()], "\"a\"");
        // A key named `id` further down is not the message's.
        let nested = format!(r#"{{"method":"x","params":{{"id":1,"d":{deep}}}}}"#);
        assert_eq!(scan(nested.as_bytes()).unwrap().id, None);
    }
}
