//! A bounded cache of sentence vectors, shared by all documents: repeated
//! sentences (boilerplate, disclaimers, navigation) are embedded once.
//!
//! Eviction is first-in-first-out over a fixed number of entries: simple,
//! O(1), and a cache hit returns the very vector a miss would compute (the
//! model's vector of a text depends on the text only), so what is cached
//! never changes any output.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// Texts to vectors, at most `capacity` of them.
#[derive(Debug)]
pub(crate) struct VectorCache {
    capacity: usize,
    map: HashMap<Arc<str>, Arc<[f32]>>,
    order: VecDeque<Arc<str>>,
    hits: u64,
    misses: u64,
}

impl VectorCache {
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity,
            map: HashMap::new(),
            order: VecDeque::new(),
            hits: 0,
            misses: 0,
        }
    }

    pub fn get(&mut self, text: &str) -> Option<Arc<[f32]>> {
        let v = self.map.get(text).cloned();
        match v {
            Some(_) => self.hits += 1,
            None => self.misses += 1,
        }
        v
    }

    pub fn put(&mut self, text: &str, vector: Arc<[f32]>) {
        if self.capacity == 0 || self.map.contains_key(text) {
            return;
        }
        while self.map.len() >= self.capacity {
            match self.order.pop_front() {
                Some(old) => {
                    self.map.remove(&old);
                }
                None => break,
            }
        }
        let key: Arc<str> = Arc::from(text);
        self.order.push_back(key.clone());
        self.map.insert(key, vector);
    }

    /// (hits, misses) so far.
    pub fn stats(&self) -> (u64, u64) {
        (self.hits, self.misses)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_entry_goes_first_and_capacity_holds() {
        let mut c = VectorCache::new(2);
        c.put("a", Arc::from(vec![1.0]));
        c.put("b", Arc::from(vec![2.0]));
        c.put("c", Arc::from(vec![3.0]));
        assert!(c.get("a").is_none());
        assert_eq!(c.get("c").as_deref(), Some(&[3.0][..]));
        assert_eq!(c.stats(), (1, 1));
        let mut off = VectorCache::new(0);
        off.put("a", Arc::from(vec![1.0]));
        assert!(off.get("a").is_none());
    }
}
