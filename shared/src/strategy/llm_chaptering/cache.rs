//! The in-process cache of a model's proposals: keyed by the SHA-256 of the
//! prompt version, the model, the section limit and the document's text
//! (what decides the answer), bounded, the oldest entry evicted first.
//! Only answers that were read are cached; a failure is asked again.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

/// A cache key.
pub(crate) type Key = [u8; 32];

/// The key of a document under a configuration.
pub(crate) fn key(parts: &[&str], text: &str) -> Key {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    h.update(text.as_bytes());
    h.finalize().into()
}

/// The entries and their order of arrival.
type Entries = (HashMap<Key, Arc<Vec<i64>>>, VecDeque<Key>);

/// At most `capacity` proposals (unit numbers), first in, first out.
#[derive(Debug, Default)]
pub(crate) struct ProposalCache {
    /// The most entries kept.
    pub(crate) capacity: usize,
    inner: Mutex<Entries>,
}

impl ProposalCache {
    /// An empty cache of `capacity` entries (0: nothing is kept).
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            capacity,
            inner: Mutex::default(),
        }
    }

    /// The proposals cached under `k`.
    pub(crate) fn get(&self, k: &Key) -> Option<Arc<Vec<i64>>> {
        let guard = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        guard.0.get(k).cloned()
    }

    /// Keeps `v` under `k`, evicting the oldest entries over capacity.
    pub(crate) fn put(&self, k: Key, v: Arc<Vec<i64>>) {
        if self.capacity == 0 {
            return;
        }
        let mut guard = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let (map, order) = &mut *guard;
        if map.insert(k, v).is_none() {
            order.push_back(k);
        }
        while map.len() > self.capacity {
            match order.pop_front() {
                Some(old) => {
                    map.remove(&old);
                }
                None => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn bounded_oldest_first_and_keyed_by_every_part() {
        let c = ProposalCache::new(2);
        let (a, b, d) = (key(&["v1"], "a"), key(&["v1"], "b"), key(&["v1"], "d"));
        assert_ne!(key(&["v1"], "a"), key(&["v2"], "a"));
        assert_ne!(key(&["v1", "x"], "a"), key(&["v1x"], "a"));
        c.put(a, Arc::new(vec![1]));
        c.put(b, Arc::new(vec![2]));
        c.put(d, Arc::new(vec![3]));
        assert!(c.get(&a).is_none());
        assert_eq!(*c.get(&b).unwrap(), vec![2]);
        assert_eq!(*c.get(&d).unwrap(), vec![3]);
        let off = ProposalCache::new(0);
        off.put(a, Arc::new(vec![1]));
        assert!(off.get(&a).is_none());
    }
}
