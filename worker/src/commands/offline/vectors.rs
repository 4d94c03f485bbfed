//! A vector store on disk for `chunk-worker eval --retriever minilm`: chunk
//! and question vectors kept across runs, keyed by the sha256 of the text,
//! so a sweep re-embeds only texts it has not seen (peers' chunks and
//! unchanged profiles cost nothing the second time). On a CPU the model
//! reads about 3,600 word pieces a second: one system of the retrieval set
//! takes minutes, a cached one seconds.
//!
//! The file is `vectors-<embedder id>.bin` (one per model and weights):
//! a magic line, then records of 32 bytes of hash and `dimensions` f32
//! little-endian. A file that does not read back whole is ignored (and
//! rewritten), never trusted in part.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest, Sha256};
use shared::embed::{EmbedError, Embedder};

const MAGIC: &[u8] = b"chunk-worker eval vectors v1\n";

/// An embedder that answers from the store and embeds only what is new.
#[derive(Debug)]
pub struct StoredVectors<'e> {
    inner: &'e dyn Embedder,
    path: PathBuf,
    known: Mutex<Known>,
}

/// The vectors by text hash, and how many this run added.
#[derive(Debug, Default)]
struct Known {
    vectors: HashMap<[u8; 32], Vec<f32>>,
    added: usize,
}

fn key(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

impl<'e> StoredVectors<'e> {
    /// The store for `inner` in `dir`, read if present and whole.
    pub fn open(inner: &'e dyn Embedder, dir: &Path) -> Self {
        let id: String = inner
            .id()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let path = dir.join(format!("vectors-{id}.bin"));
        let vectors = std::fs::read(&path)
            .ok()
            .and_then(|bytes| parse(&bytes, inner.dimensions()))
            .unwrap_or_default();
        Self {
            inner,
            path,
            known: Mutex::new(Known { vectors, added: 0 }),
        }
    }

    /// How many vectors it holds.
    pub fn len(&self) -> usize {
        self.known.lock().map(|k| k.vectors.len()).unwrap_or(0)
    }

    /// Writes the store back when something was added (atomically: a
    /// temporary file renamed over the old one).
    pub fn save(&self) -> std::io::Result<()> {
        let known = self
            .known
            .lock()
            .map_err(|_| std::io::Error::other("vector store lock poisoned"))?;
        if known.added == 0 {
            return Ok(());
        }
        let known = &known.vectors;
        let mut keys: Vec<&[u8; 32]> = known.keys().collect();
        keys.sort();
        let dims = self.inner.dimensions();
        let mut out = Vec::with_capacity(MAGIC.len() + keys.len() * (32 + 4 * dims));
        out.extend_from_slice(MAGIC);
        for k in keys {
            out.extend_from_slice(k);
            for x in &known[k] {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        let tmp = self.path.with_extension("bin.tmp");
        std::fs::write(&tmp, out)?;
        std::fs::rename(&tmp, &self.path)
    }

    /// Where it lives.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn parse(bytes: &[u8], dims: usize) -> Option<HashMap<[u8; 32], Vec<f32>>> {
    let body = bytes.strip_prefix(MAGIC)?;
    let record = 32 + 4 * dims;
    if dims == 0 || body.len() % record != 0 {
        return None;
    }
    let mut map = HashMap::with_capacity(body.len() / record);
    for r in body.chunks_exact(record) {
        let k: [u8; 32] = r[..32].try_into().ok()?;
        let v = r[32..]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        map.insert(k, v);
    }
    Some(map)
}

impl Embedder for StoredVectors<'_> {
    fn id(&self) -> &str {
        self.inner.id()
    }
    fn dimensions(&self) -> usize {
        self.inner.dimensions()
    }
    fn max_tokens(&self) -> usize {
        self.inner.max_tokens()
    }
    fn on_gpu(&self) -> bool {
        self.inner.on_gpu()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let keys: Vec<[u8; 32]> = texts.iter().map(|t| key(t)).collect();
        let missing: Vec<&str> = {
            let known = self
                .known
                .lock()
                .map_err(|_| EmbedError("vector store lock poisoned".into()))?;
            let mut seen = std::collections::HashSet::new();
            texts
                .iter()
                .zip(&keys)
                .filter(|(_, k)| !known.vectors.contains_key(*k) && seen.insert(**k))
                .map(|(t, _)| *t)
                .collect()
        };
        let fresh = if missing.is_empty() {
            Vec::new()
        } else {
            self.inner.embed(&missing)?
        };
        let mut known = self
            .known
            .lock()
            .map_err(|_| EmbedError("vector store lock poisoned".into()))?;
        known.added += fresh.len();
        for (t, v) in missing.iter().zip(fresh) {
            known.vectors.insert(key(t), v);
        }
        Ok(keys
            .iter()
            .map(|k| known.vectors.get(k).cloned().unwrap_or_default())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use shared::ToyEmbedder;

    #[test]
    fn vectors_survive_a_round_trip_and_a_torn_file_is_ignored() {
        let dir = std::env::temp_dir().join(format!("cw-vectors-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let toy = ToyEmbedder::new(8);
        let store = StoredVectors::open(&toy, &dir);
        let v = store.embed(&["alpha beta", "gamma", "alpha beta"]).unwrap();
        assert_eq!(v[0], v[2]);
        assert_eq!(v[1], toy.embed(&["gamma"]).unwrap()[0]);
        store.save().unwrap();
        let again = StoredVectors::open(&toy, &dir);
        assert_eq!(again.len(), 2);
        assert_eq!(again.embed(&["gamma"]).unwrap()[0], v[1]);
        let mut bytes = std::fs::read(again.path()).unwrap();
        bytes.pop();
        std::fs::write(again.path(), bytes).unwrap();
        assert_eq!(StoredVectors::open(&toy, &dir).len(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
