//! What a keep-alive connection sends again with every request. A client names the same
//! `Host` and the same `Accept` on each request of a connection, and judging them again
//! (parsing, matching the allow-list, splitting media ranges) cost each POST thousands of
//! instructions. A connection remembers the value its last request sent and what judging it
//! gave; a request that sends exactly those bytes gets the same outcome, anything else is
//! judged in full.

use std::sync::{Mutex, MutexGuard};

/// The longest value a memo keeps; a longer one is judged every time.
const LIMIT: usize = 256;

/// One header's last value on a connection and the outcome of judging it. Nothing matches
/// until a value is remembered, an empty value included.
pub(crate) struct HeaderMemo<T>(Mutex<Option<(Vec<u8>, T)>>);

impl<T> Default for HeaderMemo<T> {
    fn default() -> Self {
        HeaderMemo(Mutex::new(None))
    }
}

impl<T: Copy> HeaderMemo<T> {
    fn kept(&self) -> MutexGuard<'_, Option<(Vec<u8>, T)>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The outcome remembered for exactly these bytes.
    pub(crate) fn recall(&self, value: &[u8]) -> Option<T> {
        match &*self.kept() {
            Some((kept, outcome)) if kept == value => Some(*outcome),
            _ => None,
        }
    }

    /// Remembers `outcome` for `value` in place of what was kept (in the same buffer); a
    /// value longer than [`LIMIT`] is not kept, and what was kept stays.
    pub(crate) fn remember(&self, value: &[u8], outcome: T) {
        if value.len() > LIMIT {
            return;
        }
        match &mut *self.kept() {
            Some((kept, kept_outcome)) => {
                kept.clear();
                kept.extend_from_slice(value);
                *kept_outcome = outcome;
            }
            slot @ None => *slot = Some((value.to_vec(), outcome)),
        }
    }
}

/// What a connection remembers of its last POST: the `Host` it passed with (only a host
/// that passed is kept), and the `Accept` it sent with what that allowed of a POST's answer
/// (JSON, an event stream).
#[derive(Default)]
pub(crate) struct ConnectionMemo {
    pub host: HeaderMemo<()>,
    pub accept: HeaderMemo<[bool; 2]>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_bytes_last_remembered_are_recalled() {
        let memo = HeaderMemo::<u8>::default();
        // Nothing before a value is remembered, the empty value included.
        assert_eq!(memo.recall(b""), None);
        assert_eq!(memo.recall(b"localhost"), None);
        memo.remember(b"localhost", 1);
        assert_eq!(memo.recall(b"localhost"), Some(1));
        assert_eq!(memo.recall(b"localhost:1"), None);
        assert_eq!(memo.recall(b"LOCALHOST"), None);
        assert_eq!(memo.recall(b""), None);
        // A new value takes the place of the old one.
        memo.remember(b"", 2);
        assert_eq!(memo.recall(b""), Some(2));
        assert_eq!(memo.recall(b"localhost"), None);
        // A value over the limit is not kept, and what was kept stays.
        let long = vec![b'a'; LIMIT + 1];
        memo.remember(&long, 3);
        assert_eq!(memo.recall(&long), None);
        assert_eq!(memo.recall(b""), Some(2));
        let longest = vec![b'a'; LIMIT];
        memo.remember(&longest, 4);
        assert_eq!(memo.recall(&longest), Some(4));
    }
}
