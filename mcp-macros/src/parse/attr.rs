//! What every attribute's keys are read with: [`Attr`], a value that may be given once (a key
//! given twice is reported), and [`suggestion`], the closest known key to one that is not.

use crate::ctxt::Ctxt;

/// An attribute value that may be given once; a second occurrence is reported as a duplicate.
pub(crate) struct Attr<'c, T> {
    cx: &'c Ctxt,
    name: &'static str,
    value: Option<T>,
}

impl<'c, T> Attr<'c, T> {
    pub(crate) fn none(cx: &'c Ctxt, name: &'static str) -> Self {
        Attr {
            cx,
            name,
            value: None,
        }
    }

    /// Sets the value, or reports a duplicate at `obj` (the key as written).
    pub(crate) fn set<A: quote::ToTokens>(&mut self, obj: A, value: T) {
        if self.value.is_some() {
            self.cx
                .error_spanned_by(obj, format!("duplicate attribute `{}`", self.name));
        } else {
            self.value = Some(value);
        }
    }

    /// Sets the value read after a key, if one could be read.
    pub(crate) fn set_read(&mut self, meta: &syn::meta::ParseNestedMeta<'_>, value: Option<T>) {
        if let Some(value) = value {
            self.set(&meta.path, value);
        }
    }

    pub(crate) fn get(self) -> Option<T> {
        self.value
    }
}

/// "did you mean `x`?" for a misspelt key, when one known key is close, or when one is a
/// longer or shorter form of the other (`mime_type` for `mime`, `desc` for `description`).
pub(crate) fn suggestion(unknown: &str, known: &[&str]) -> String {
    let close = known
        .iter()
        .map(|k| (edit_distance(unknown, k), *k))
        .min_by_key(|(d, _)| *d)
        .filter(|(d, k)| *d <= (k.len() / 3).max(2))
        .map(|(_, k)| k);
    let best = close.or_else(|| {
        known.iter().copied().find(|k| {
            let (short, long) = if k.len() < unknown.len() {
                (*k, unknown)
            } else {
                (unknown, *k)
            };
            short.len() >= 4 && long.starts_with(short)
        })
    });
    match best {
        Some(k) => format!("; did you mean `{k}`?"),
        None if known.len() == 1 => format!("; expected `{}`", known[0]),
        None => format!(
            "; expected one of {}",
            known
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(cur).min(row[j])
            };
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_keys_are_suggested() {
        assert_eq!(
            suggestion("nmae", &["name", "title"]),
            "; did you mean `name`?"
        );
        assert_eq!(
            suggestion("zzzzzz", &["name", "title"]),
            "; expected one of `name`, `title`"
        );
        assert_eq!(
            suggestion("mime_type", &["mime", "meta"]),
            "; did you mean `mime`?"
        );
        assert_eq!(
            suggestion("desc", &["description", "title"]),
            "; did you mean `description`?"
        );
    }
}
