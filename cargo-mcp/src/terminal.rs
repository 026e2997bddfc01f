//! A server's text made safe to print on a terminal.
//!
//! Names, descriptions, answers and error messages are the server's own text. Printed as
//! they are, the terminal obeys the control characters in them: ANSI and OSC escape
//! sequences erase and rewrite what was printed before (a tool shown under another name),
//! hide a link's target behind other text (OSC 8) or write the clipboard (OSC 52). Each
//! control character (C0, DEL and C1, escape included) is shown as Rust writes it in a
//! string instead (`\u{1b}`, `\r`), except the line breaks and tabs of text that spans
//! lines.

use std::borrow::Cow;
use std::fmt::Write;

/// `text` on one line of its own or of a listing: every control character escaped, line
/// breaks and tabs included (a line break in a name would start a line that seems ours).
pub(crate) fn line(text: &str) -> Cow<'_, str> {
    escaped(text, false)
}

/// `text` printed as lines (a tool's answer, a description in full): every control
/// character escaped but line feeds, tabs, and carriage returns ending a line (`\r\n`).
pub(crate) fn lines(text: &str) -> Cow<'_, str> {
    escaped(text, true)
}

/// JSON text for a terminal: the DEL and C1 characters JSON leaves raw in strings written
/// `\u007f`, `\u009b` (the same strings); the C0 ones are escaped already.
pub(crate) fn json(text: String) -> String {
    // Outside strings, JSON text holds no control character but white space; inside, the
    // line breaks and tabs are escaped already.
    let raw = |c: char| c.is_control() && !matches!(c, '\n' | '\t' | '\r');
    if !text.chars().any(raw) {
        return text;
    }
    let mut shown = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if raw(c) {
            let _ = write!(shown, "\\u{:04x}", u32::from(c));
        } else {
            shown.push(c);
        }
    }
    shown
}

fn escaped(text: &str, multiline: bool) -> Cow<'_, str> {
    // Whether the character at `at` is printed as it is.
    let kept = |at: usize, c: char| {
        !c.is_control()
            || (multiline
                && (matches!(c, '\n' | '\t') || (c == '\r' && text[at + 1..].starts_with('\n'))))
    };
    if text.char_indices().all(|(at, c)| kept(at, c)) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 16);
    for (at, c) in text.char_indices() {
        if kept(at, c) {
            shown.push(c);
        } else {
            shown.extend(c.escape_debug());
        }
    }
    Cow::Owned(shown)
}

#[cfg(test)]
mod tests {
    use super::{json, line, lines};

    #[test]
    fn escape_sequences_and_other_control_characters_are_shown_escaped() {
        let erase = "evil\u{1b}[2K\r\u{1b}]52;c;cHduZWQ=\u{7}\u{9b}1A\u{7f}\u{0}";
        let shown = r"evil\u{1b}[2K\r\u{1b}]52;c;cHduZWQ=\u{7}\u{9b}1A\u{7f}\0";
        assert_eq!(line(erase), shown);
        assert_eq!(lines(erase), shown);
        assert_eq!(line("plain é 名前"), "plain é 名前");
    }

    #[test]
    fn text_of_several_lines_keeps_its_line_breaks_and_tabs_and_a_name_does_not() {
        assert_eq!(lines("one\ttwo\r\nthree\n"), "one\ttwo\r\nthree\n");
        assert_eq!(lines("a\rb\r"), r"a\rb\r");
        assert_eq!(line("one\ttwo\r\nthree"), r"one\ttwo\r\nthree");
    }

    #[test]
    fn json_text_has_del_and_c1_written_as_escapes_of_the_same_string() {
        let text = serde_json::to_string_pretty(&serde_json::json!({"n": "a\u{9b}b\u{7f}\u{1b}"}))
            .unwrap();
        let shown = json(text);
        assert!(!shown.contains(['\u{9b}', '\u{7f}', '\u{1b}']), "{shown}");
        let back: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(back["n"], "a\u{9b}b\u{7f}\u{1b}");
    }
}
