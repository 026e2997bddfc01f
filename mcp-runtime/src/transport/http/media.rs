//! Media types in `Content-Type` and `Accept` (RFC 9110 §8.3 and §12.5.1), parsed with the
//! `mime` crate: names compare without regard to case, parameters are read, and a media range
//! with `q=0` refuses a type rather than accepting it. A value without parameters (what
//! clients send almost always) is compared as it stands, without the parser.

use axum::http::{HeaderMap, header};
use mime::Mime;

use super::memo::HeaderMemo;

/// Whether a request's `Content-Type` says JSON: `application/json`, in any case, with no
/// charset or with UTF-8 (JSON is UTF-8 on the wire, RFC 8259 §8.1).
pub(super) fn is_json_body(headers: &HeaderMap) -> bool {
    let mut values = headers.get_all(header::CONTENT_TYPE).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return false;
    };
    if value.as_bytes().eq_ignore_ascii_case(b"application/json") {
        return true;
    }
    let Some(mime) = value.to_str().ok().and_then(|v| v.parse::<Mime>().ok()) else {
        return false;
    };
    mime.essence_str() == "application/json"
        && mime
            .get_param(mime::CHARSET)
            .is_none_or(|charset| charset.as_str().eq_ignore_ascii_case("utf-8"))
}

/// Whether the request's `Accept` allows `media` (`type/subtype`, lower case). A missing
/// header allows anything. The most specific range that matches decides (an exact type over
/// `type/*` over `*/*`), and a quality of 0 means "not acceptable".
pub(super) fn accepts(headers: &HeaderMap, media: &str) -> bool {
    let [allowed] = accepts_each(headers, [media]);
    allowed
}

/// The media types a POST's answer may take: a JSON body, or an event stream.
const ANSWER_MEDIA: [&str; 2] = ["application/json", "text/event-stream"];

/// [`accepts_each`] of [`ANSWER_MEDIA`], through the connection's memo of its last `Accept`
/// when there is one and the request sends a single `Accept` (the answer depends on the
/// value's bytes alone).
pub(super) fn accepts_answer(
    headers: &HeaderMap,
    memo: Option<&HeaderMemo<[bool; 2]>>,
) -> [bool; 2] {
    let mut values = headers.get_all(header::ACCEPT).iter();
    let (Some(memo), Some(value), None) = (memo, values.next(), values.next()) else {
        return accepts_each(headers, ANSWER_MEDIA);
    };
    if let Some(allowed) = memo.recall(value.as_bytes()) {
        return allowed;
    }
    let allowed = accepts_each(headers, ANSWER_MEDIA);
    memo.remember(value.as_bytes(), allowed);
    allowed
}

/// [`accepts`] for several media types, reading the header once. Ranges are looked at as
/// bytes (the value is visible ASCII), split at commas; only a range with parameters goes
/// through the parser.
pub(super) fn accepts_each<const N: usize>(headers: &HeaderMap, media: [&str; N]) -> [bool; N] {
    let wanted = media.map(|m| {
        let (kind, subtype) = m.split_once('/').unwrap_or((m, ""));
        (kind.as_bytes(), subtype.as_bytes())
    });
    // For each media type: how specific the range that decides is, and its quality.
    let mut best: [Option<(u8, f32)>; N] = [None; N];
    let mut any = false;
    for value in &headers.get_all(header::ACCEPT) {
        // A value that is not visible ASCII is not read, as if it were not there.
        let Ok(value) = value.to_str() else {
            continue;
        };
        for range in value.as_bytes().split(|&b| b == b',') {
            let range = range.trim_ascii();
            if range.is_empty() {
                continue;
            }
            any = true;
            let parsed;
            let (kind, subtype, quality) = if range.contains(&b';') {
                let Some(range) = std::str::from_utf8(range)
                    .ok()
                    .and_then(|r| r.parse::<Mime>().ok())
                else {
                    continue;
                };
                parsed = range;
                let quality = parsed
                    .get_param("q")
                    .map_or(Some(1.0), |q| q.as_str().parse::<f32>().ok())
                    .filter(|q| (0.0..=1.0).contains(q))
                    .unwrap_or(0.0);
                let (kind, subtype) = (parsed.type_().as_str(), parsed.subtype().as_str());
                (kind.as_bytes(), subtype.as_bytes(), quality)
            } else {
                // Without parameters a range is its two names, compared as the parser would
                // (without regard to case); one that is not `type/subtype` matches nothing.
                let Some(slash) = range.iter().position(|&b| b == b'/') else {
                    continue;
                };
                (&range[..slash], &range[slash + 1..], 1.0)
            };
            for ((want_kind, want_subtype), best) in wanted.iter().zip(best.iter_mut()) {
                let same_kind = kind.eq_ignore_ascii_case(want_kind);
                let specificity = if same_kind && subtype.eq_ignore_ascii_case(want_subtype) {
                    2
                } else if same_kind && subtype == b"*" {
                    1
                } else if kind == b"*" && subtype == b"*" {
                    0
                } else {
                    continue;
                };
                if best.is_none_or(|(s, _)| specificity > s) {
                    *best = Some((specificity, quality));
                }
            }
        }
    }
    if !any {
        return [true; N];
    }
    best.map(|best| best.is_some_and(|(_, quality)| quality > 0.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn with(name: header::HeaderName, values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(&name, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn json_bodies_are_recognised_in_any_case_and_only_in_utf_8() {
        let json = |v: &str| is_json_body(&with(header::CONTENT_TYPE, &[v]));
        assert!(json("application/json"));
        assert!(json("APPLICATION/JSON"));
        assert!(json("application/json; charset=UTF-8"));
        assert!(json("application/json;charset=\"utf-8\""));
        assert!(!json("application/jsonx"));
        assert!(!json("application/json; charset=utf-16"));
        assert!(!json("text/json"));
        assert!(!json("application/json, text/plain"));
        assert!(!is_json_body(&with(
            header::CONTENT_TYPE,
            &["application/json", "application/json"]
        )));
        assert!(!is_json_body(&HeaderMap::new()));
    }

    #[test]
    fn accept_ranges_match_by_specificity_and_quality() {
        let allows = |v: &[&str], m: &str| accepts(&with(header::ACCEPT, v), m);
        assert!(allows(
            &["application/json, text/event-stream"],
            "text/event-stream"
        ));
        assert!(allows(&["APPLICATION/JSON"], "application/json"));
        assert!(allows(&["*/*"], "application/json"));
        assert!(allows(&["text/*"], "text/event-stream"));
        assert!(allows(
            &["application/json", "text/event-stream"],
            "text/event-stream"
        ));
        assert!(!allows(&["application/json;q=0"], "application/json"));
        assert!(!allows(&["application/json; q=0.0"], "application/json"));
        assert!(!allows(&["*/*, application/json;q=0"], "application/json"));
        assert!(allows(&["*/*;q=0, application/json"], "application/json"));
        assert!(!allows(&["application/jsonx"], "application/json"));
        assert!(!allows(&["text/html"], "application/json"));
        assert!(allows(&[], "application/json"), "no header allows anything");
        assert!(!allows(&["application"], "application/json"));
        assert!(!allows(&["application/json/x"], "application/json"));
        assert!(!allows(&["*/json"], "application/json"));
    }

    #[test]
    fn each_media_type_is_judged_on_its_own_in_one_reading() {
        let each = |v: &[&str]| {
            accepts_each(
                &with(header::ACCEPT, v),
                ["application/json", "text/event-stream"],
            )
        };
        assert_eq!(each(&["application/json, text/event-stream"]), [true, true]);
        assert_eq!(each(&["Application/JSON,TEXT/event-stream"]), [true, true]);
        assert_eq!(each(&["application/json"]), [true, false]);
        assert_eq!(each(&["text/*"]), [false, true]);
        assert_eq!(each(&["*/*;q=0.5, text/event-stream;q=0"]), [true, false]);
        assert_eq!(each(&["application/json;q=0, */*"]), [false, true]);
        assert_eq!(each(&[]), [true, true]);
    }

    #[test]
    fn a_connections_memo_answers_as_reading_the_header_would() {
        // One connection sending values in turn, some again, some changed by a byte: each
        // answer is the one a reading without the memo gives.
        let memo = HeaderMemo::default();
        let long = format!("application/json, text/event-stream{}", ", a/b".repeat(60));
        let values: [&[&str]; 12] = [
            &["application/json, text/event-stream"],
            &["application/json, text/event-stream"],
            &["application/json"],
            &["application/json"],
            &["application/json, text/event-stream"],
            &["application/json;q=0, text/event-stream"],
            &["application/json;q=0, text/event-stream"],
            &[""],
            &["text/html"],
            &["text/html", "application/json"],
            &[&long],
            &["application/json, text/event-stream"],
        ];
        for value in values {
            let headers = with(header::ACCEPT, value);
            assert_eq!(
                accepts_answer(&headers, Some(&memo)),
                accepts_each(&headers, ANSWER_MEDIA),
                "{value:?}"
            );
        }
        let none = HeaderMap::new();
        assert_eq!(accepts_answer(&none, Some(&memo)), [true, true]);
        // Two values are read every time, and a value too long to keep is not kept.
        assert_eq!(
            memo.recall(b"application/json, text/event-stream"),
            Some([true, true])
        );
        assert_eq!(memo.recall(long.as_bytes()), None);
    }
}
