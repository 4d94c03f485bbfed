//! Unstructured's `_TextSplitter` (character mode), over what is left of a
//! text ([`Rest`]: a short head, the overlap, and the rest of the text as
//! it is) so that splitting a long element copies nothing but each piece.

use super::stext::{py_isspace, SChar, SText};

/// What is left to split: `head` (an overlap) then `base[pos..]`.
#[derive(Debug, Clone)]
pub struct Rest<'a> {
    head: Vec<SChar>,
    base: &'a [SChar],
    pos: usize,
}

impl<'a> Rest<'a> {
    /// All of `base`.
    pub fn new(base: &'a [SChar]) -> Self {
        Rest { head: Vec::new(), base, pos: 0 }
    }

    /// Length in characters.
    pub fn len(&self) -> usize {
        self.head.len() + self.base.len() - self.pos
    }

    /// Nothing left.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn at(&self, i: usize) -> char {
        match self.head.get(i) {
            Some(x) => x.c,
            None => self.base[self.pos + i - self.head.len()].c,
        }
    }

    fn has_at(&self, i: usize, sep: &[char]) -> bool {
        i + sep.len() <= self.len() && sep.iter().enumerate().all(|(k, &c)| self.at(i + k) == c)
    }

    /// `self[r]` as text.
    fn take(&self, r: std::ops::Range<usize>) -> SText {
        let h = self.head.len();
        let mut out: Vec<SChar> = self.head[r.start.min(h)..r.end.min(h)].to_vec();
        if r.end > h {
            out.extend_from_slice(&self.base[self.pos + r.start.max(h) - h..self.pos + r.end - h]);
        }
        SText(out)
    }

    /// `self[i:]`.
    fn drop_front(&self, i: usize) -> Rest<'a> {
        let h = self.head.len();
        if i <= h {
            Rest { head: self.head[i..].to_vec(), base: self.base, pos: self.pos }
        } else {
            Rest { head: Vec::new(), base: self.base, pos: self.pos + i - h }
        }
    }

    /// `.lstrip()`.
    fn lstrip(&self) -> Rest<'a> {
        let n = (0..self.len()).find(|&i| !py_isspace(self.at(i))).unwrap_or(self.len());
        self.drop_front(n)
    }

    /// The whole of it as text.
    pub fn to_stext(&self) -> SText {
        self.take(0..self.len())
    }
}

/// `_TextSplitter.__call__` (character mode): `s` whole when it fits, else
/// cut at the rightmost separator in `s[overlap + 1 : maxlen + len(sep)]`
/// (separators in order), the next piece starting with the last
/// `overlap - 1` characters of this one and a space; without a separator a
/// hard cut at `maxlen` with `overlap` characters repeated.
pub fn split_rest<'a>(s: &Rest<'a>, maxlen: usize, overlap: usize, seps: &[String]) -> (SText, Rest<'a>) {
    if s.len() <= maxlen {
        return (s.to_stext(), Rest::new(&[]));
    }
    for sep in seps {
        let sep: Vec<char> = sep.chars().collect();
        if sep.is_empty() {
            continue;
        }
        let (pos, endpos) = (overlap + 1, (maxlen + sep.len()).min(s.len()));
        if endpos < pos + sep.len() {
            continue;
        }
        let Some(i) = (pos..=endpos - sep.len()).rev().find(|&i| s.has_at(i, &sep)) else {
            continue;
        };
        let fragment = s.take(0..i).rstrip();
        let raw = s.drop_front(i + sep.len()).lstrip();
        let remainder = if overlap <= 1 {
            raw
        } else {
            let mut head = fragment.tail(overlap - 1).lstrip();
            let fallback = raw.head.first().or(raw.base.get(raw.pos)).map_or(0, |x| x.src);
            head.push_str(" ", fallback);
            head.0.extend_from_slice(&raw.head);
            Rest { head: head.0, base: raw.base, pos: raw.pos }
        };
        if fragment.is_empty() || remainder.len() >= s.len() {
            continue;
        }
        return (fragment.rstrip(), remainder.lstrip());
    }
    (s.take(0..maxlen).rstrip(), s.drop_front(maxlen - overlap).lstrip())
}

/// [`split_rest`] of a whole text: (piece, remainder).
pub fn split_text(s: &SText, maxlen: usize, overlap: usize, seps: &[String]) -> (SText, SText) {
    let (a, r) = split_rest(&Rest::new(&s.0), maxlen, overlap, seps);
    (a, r.to_stext())
}
