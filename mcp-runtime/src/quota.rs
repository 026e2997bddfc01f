//! Things in use, counted by key against a limit for each key and one for all keys
//! together; each holder gives its place back when it is dropped. Connections by peer,
//! requests in flight by client and running tasks by owner are all counted this way.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard};

/// Counts by key, with the most one key and all keys together may hold. Clones share the
/// counts.
pub(crate) struct Quota<K: Eq + Hash> {
    counts: Arc<Mutex<Counts<K>>>,
    per_key: usize,
    total: usize,
}

impl<K: Eq + Hash> Clone for Quota<K> {
    fn clone(&self) -> Self {
        Quota {
            counts: Arc::clone(&self.counts),
            per_key: self.per_key,
            total: self.total,
        }
    }
}

struct Counts<K> {
    by_key: HashMap<K, usize>,
    total: usize,
}

/// One place in a [`Quota`], given back when dropped.
pub(crate) struct Held<K: Eq + Hash> {
    counts: Arc<Mutex<Counts<K>>>,
    /// Taken when dropped, to look the count up by `entry` (hashing the key once).
    key: Option<K>,
}

/// A refusal: the key or all keys together hold as many places as they may.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Full {
    /// Places the key holds.
    pub held: usize,
    /// Places all keys hold.
    pub total: usize,
}

impl<K: Eq + Hash + Clone> Quota<K> {
    /// A quota of `per_key` places for each key and `total` for all; each at least 1.
    pub(crate) fn new(per_key: usize, total: usize) -> Self {
        Quota {
            counts: Arc::new(Mutex::new(Counts {
                by_key: HashMap::new(),
                total: 0,
            })),
            per_key: per_key.max(1),
            total: total.max(1),
        }
    }

    /// Takes a place for `key`, or says how full the quota is.
    pub(crate) fn take(&self, key: K) -> Result<Held<K>, Full> {
        let mut counts = lock(&self.counts);
        let total = counts.total;
        // One look into the map (the key hashed once), and one copy of the key, for `Held`.
        let key = match counts.by_key.entry(key) {
            Entry::Occupied(mut held) => {
                if *held.get() >= self.per_key || total >= self.total {
                    return Err(Full {
                        held: *held.get(),
                        total,
                    });
                }
                *held.get_mut() += 1;
                held.key().clone()
            }
            Entry::Vacant(none) => {
                if total >= self.total {
                    return Err(Full { held: 0, total });
                }
                let key = none.key().clone();
                none.insert(1);
                key
            }
        };
        counts.total += 1;
        Ok(Held {
            counts: Arc::clone(&self.counts),
            key: Some(key),
        })
    }
}

impl<K: Eq + Hash> Drop for Held<K> {
    fn drop(&mut self) {
        let mut counts = lock(&self.counts);
        counts.total -= 1;
        if let Some(key) = self.key.take()
            && let Entry::Occupied(mut held) = counts.by_key.entry(key)
        {
            *held.get_mut() -= 1;
            if *held.get() == 0 {
                held.remove();
            }
        }
    }
}

fn lock<K>(counts: &Mutex<Counts<K>>) -> MutexGuard<'_, Counts<K>> {
    counts.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_key_and_all_keys_are_bounded() {
        let quota = Quota::new(2, 3);
        let a1 = quota.take("a").unwrap();
        let _a2 = quota.take("a").unwrap();
        assert_eq!(quota.take("a").err(), Some(Full { held: 2, total: 2 }));
        let _b1 = quota.take("b").unwrap();
        assert_eq!(quota.take("c").err(), Some(Full { held: 0, total: 3 }));
        drop(a1);
        let _c1 = quota.take("c").unwrap();
    }

    #[test]
    fn places_come_back_when_dropped_and_empty_keys_are_forgotten() {
        let quota = Quota::new(1, 10);
        for _ in 0..5 {
            let held = quota.take(7).unwrap();
            assert!(quota.take(7).is_err());
            drop(held);
        }
        assert!(lock(&quota.counts).by_key.is_empty());
        assert_eq!(lock(&quota.counts).total, 0);
    }

    #[test]
    fn clones_share_the_counts() {
        let quota = Quota::new(1, 10);
        let _held = quota.take(1).unwrap();
        assert!(quota.clone().take(1).is_err());
    }
}
