//! A string written as JSON, eight bytes at a time.
//!
//! serde_json escapes a string one byte at a time, about nine instructions a byte: for a
//! tool's text of a kilobyte that is more than a small call's whole dispatch. Most text needs
//! no escape at all, so this looks at eight bytes at once and copies the runs between the
//! escapes whole. The output is byte for byte what serde_json writes (its escapes, its
//! lowercase hex), so a result reads the same whichever wrote it.

/// Eight bytes of one value each.
const fn repeat(byte: u8) -> u64 {
    u64::from_ne_bytes([byte; 8])
}

const HIGH: u64 = repeat(0x80);

/// Nonzero when any of the eight bytes of `word` is below `n` (at most 128): exact as a yes
/// or no, though not as to which byte (a borrow may mark bytes above the first).
const fn below(word: u64, n: u8) -> u64 {
    word.wrapping_sub(repeat(n)) & !word & HIGH
}

/// Nonzero when any of the eight bytes of `word` is `byte`.
const fn equal(word: u64, byte: u8) -> u64 {
    below(word ^ repeat(byte), 1)
}

/// Whether JSON needs any of these eight bytes escaped: a control character, `"` or `\`.
/// The three tests are or-ed without a branch between them.
const fn needs_escape(word: u64) -> bool {
    below(word, 0x20) | equal(word, b'"') | equal(word, b'\\') != 0
}

/// The eight bytes of `bytes` from `at`, if there are eight.
fn word_at(bytes: &[u8], at: usize) -> Option<u64> {
    let chunk: [u8; 8] = bytes.get(at..at + 8)?.try_into().ok()?;
    Some(u64::from_ne_bytes(chunk))
}

/// Appends `text` as a JSON string, quotes included.
pub(crate) fn write_json_string(out: &mut String, text: &str) {
    out.reserve(text.len() + 2);
    out.push('"');
    let bytes = text.as_bytes();
    // `run` is where the bytes not yet copied begin; `at` the next byte to look at.
    let mut run = 0;
    let mut at = 0;
    while at < bytes.len() {
        // Two words a turn while neither needs an escape, then one.
        while let (Some(first), Some(second)) = (word_at(bytes, at), word_at(bytes, at + 8)) {
            if needs_escape(first) | needs_escape(second) {
                break;
            }
            at += 16;
        }
        while let Some(word) = word_at(bytes, at) {
            if needs_escape(word) {
                break;
            }
            at += 8;
        }
        let Some(&byte) = bytes.get(at) else { break };
        let escape: &str = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0x00..=0x1f => "",
            _ => {
                at += 1;
                continue;
            }
        };
        // Every byte escaped is ASCII, so both ends of the run are character boundaries.
        out.push_str(&text[run..at]);
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0xf)]));
        } else {
            out.push_str(escape);
        }
        at += 1;
        run = at;
    }
    out.push_str(&text[run..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(text: &str) -> String {
        let mut out = String::new();
        write_json_string(&mut out, text);
        out
    }

    #[test]
    fn every_character_below_256_is_written_as_serde_json_writes_it() {
        for c in (0..=255u8).map(char::from) {
            // Alone, and at each place of an eight-byte word and across two words.
            for at in 0..17 {
                let mut text = "a".repeat(at);
                text.push(c);
                text.push_str("bc");
                assert_eq!(
                    written(&text),
                    serde_json::to_string(&text).unwrap(),
                    "{c:?} at {at}"
                );
            }
        }
    }

    #[test]
    fn mixed_texts_are_written_as_serde_json_writes_them() {
        let pieces = [
            "",
            "a",
            "\"",
            "\\",
            "\n",
            "\u{1}",
            "\u{1f}",
            "\u{7f}",
            "é",
            "€",
            "😀",
            "\u{2028}",
            "plain words ",
            "{\"k\":\"v\"}",
            "\t\r\u{8}\u{c}",
        ];
        // A small generator, the same every run: texts of up to 40 pieces.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..2_000 {
            let mut text = String::new();
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            for i in 0..(state % 40) {
                text.push_str(pieces[((state >> (i % 50)) as usize ^ i as usize) % pieces.len()]);
            }
            assert_eq!(written(&text), serde_json::to_string(&text).unwrap());
        }
        let long = "x".repeat(100_000) + "\"" + &"y".repeat(3);
        assert_eq!(written(&long), serde_json::to_string(&long).unwrap());
    }

    #[test]
    fn the_word_test_sees_each_byte_that_needs_an_escape_and_no_other() {
        for byte in 0..=255u8 {
            for place in 0..8 {
                let mut word = [b'a'; 8];
                word[place] = byte;
                let escaped = byte < 0x20 || byte == b'"' || byte == b'\\';
                assert_eq!(
                    needs_escape(u64::from_ne_bytes(word)),
                    escaped,
                    "{byte:#x} at {place}"
                );
                // Beside bytes of the upper half, which the subtraction borrows from.
                let mut word = [0xff; 8];
                word[place] = byte;
                assert_eq!(needs_escape(u64::from_ne_bytes(word)), escaped);
            }
        }
    }
}
