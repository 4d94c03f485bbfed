//! A profile's `[params]` table as a strategy reads it: typed getters with
//! defaults and range checks, and a final check that no key was left unread
//! (an unknown key is a typo the user wants to hear about, not a silent
//! default).
//!
//! Every error names the key, the value and the valid range or choices, e.g.
//! `params.chunk_size = 50 is out of range; valid: 100..=4096`.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::ops::RangeInclusive;

/// The Chunking System specification's valid range of a chunk's target size, in tokens.
pub const TARGET_TOKENS: RangeInclusive<usize> = 100..=4096;
/// The Chunking System specification's valid range of the overlap as a share of the target.
pub const OVERLAP_RATIO: RangeInclusive<f64> = 0.0..=0.5;
/// The largest hard maximum any profile may ask for.
pub const MAX_HARD_MAX: usize = 8192;

/// A problem with one parameter, worded for the person who wrote the profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamError(pub String);

impl std::fmt::Display for ParamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reads a `[params]` table (or a table nested in it), remembering which keys
/// were read.
#[derive(Debug)]
pub struct Params<'a> {
    table: &'a toml::Table,
    /// `params` or `params.overlap`: how keys are named in messages.
    path: String,
    used: RefCell<BTreeSet<String>>,
}

impl<'a> Params<'a> {
    /// Wraps `table`, whose keys are named `{path}.{key}` in messages.
    pub fn new(table: &'a toml::Table, path: &str) -> Self {
        Self {
            table,
            path: path.to_owned(),
            used: RefCell::new(BTreeSet::new()),
        }
    }

    fn get(&self, key: &str) -> Option<&'a toml::Value> {
        self.used.borrow_mut().insert(key.to_owned());
        self.table.get(key)
    }

    fn name(&self, key: &str) -> String {
        format!("{}.{key}", self.path)
    }

    fn wrong_type(&self, key: &str, v: &toml::Value, want: &str) -> ParamError {
        ParamError(format!(
            "{} = {v} is a {}; expected {want}",
            self.name(key),
            v.type_str()
        ))
    }

    /// An integer in `range`; `default` when absent (`None`: required).
    pub fn usize_in(
        &self,
        key: &str,
        default: Option<usize>,
        range: RangeInclusive<usize>,
    ) -> Result<usize, ParamError> {
        let Some(v) = self.get(key) else {
            return default.ok_or_else(|| {
                ParamError(format!(
                    "{} is required (an integer in {}..={})",
                    self.name(key),
                    range.start(),
                    range.end()
                ))
            });
        };
        let n = v
            .as_integer()
            .ok_or_else(|| self.wrong_type(key, v, "an integer"))?;
        usize::try_from(n)
            .ok()
            .filter(|n| range.contains(n))
            .ok_or_else(|| {
                ParamError(format!(
                    "{} = {n} is out of range; valid: {}..={}",
                    self.name(key),
                    range.start(),
                    range.end()
                ))
            })
    }

    /// An optional integer in `range`.
    pub fn opt_usize_in(
        &self,
        key: &str,
        range: RangeInclusive<usize>,
    ) -> Result<Option<usize>, ParamError> {
        if self.table.contains_key(key) {
            self.usize_in(key, None, range).map(Some)
        } else {
            self.used.borrow_mut().insert(key.to_owned());
            Ok(None)
        }
    }

    /// A number (integer or float) in `range`; `default` when absent.
    pub fn f64_in(
        &self,
        key: &str,
        default: f64,
        range: RangeInclusive<f64>,
    ) -> Result<f64, ParamError> {
        let Some(v) = self.get(key) else {
            return Ok(default);
        };
        let x = match v {
            toml::Value::Float(f) => *f,
            toml::Value::Integer(i) => *i as f64,
            _ => return Err(self.wrong_type(key, v, "a number")),
        };
        if range.contains(&x) {
            Ok(x)
        } else {
            Err(ParamError(format!(
                "{} = {x} is out of range; valid: {}..={}",
                self.name(key),
                range.start(),
                range.end()
            )))
        }
    }

    /// A boolean; `default` when absent.
    pub fn bool_or(&self, key: &str, default: bool) -> Result<bool, ParamError> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v
                .as_bool()
                .ok_or_else(|| self.wrong_type(key, v, "true or false")),
        }
    }

    /// One of `choices` (a string); `default` when absent.
    pub fn choice(
        &self,
        key: &str,
        default: &'static str,
        choices: &[&'static str],
    ) -> Result<&'static str, ParamError> {
        let Some(v) = self.get(key) else {
            return Ok(default);
        };
        let s = v
            .as_str()
            .ok_or_else(|| self.wrong_type(key, v, "a string"))?;
        choices.iter().find(|c| **c == s).copied().ok_or_else(|| {
            ParamError(format!(
                "{} = {s:?} is not one of {}",
                self.name(key),
                choices.join(", ")
            ))
        })
    }

    /// A list of strings; empty when absent.
    pub fn strings(&self, key: &str) -> Result<Vec<String>, ParamError> {
        let Some(v) = self.get(key) else {
            return Ok(Vec::new());
        };
        let list = v
            .as_array()
            .ok_or_else(|| self.wrong_type(key, v, "a list of strings"))?;
        list.iter()
            .map(|x| {
                x.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| self.wrong_type(key, x, "a string"))
            })
            .collect()
    }

    /// An optional string.
    pub fn opt_string(&self, key: &str) -> Result<Option<String>, ParamError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_str()
                .map(|s| Some(s.to_owned()))
                .ok_or_else(|| self.wrong_type(key, v, "a string")),
        }
    }

    /// The raw value of `key`, for parameters with several accepted shapes.
    pub fn value(&self, key: &str) -> Option<&'a toml::Value> {
        self.get(key)
    }

    /// A nested table (`overlap = { ... }`), read with the same checks.
    pub fn table(&self, key: &str) -> Result<Option<Params<'a>>, ParamError> {
        match self.get(key) {
            None => Ok(None),
            Some(toml::Value::Table(t)) => Ok(Some(Params::new(t, &self.name(key)))),
            Some(v) => Err(self.wrong_type(key, v, "a table")),
        }
    }

    /// An error about `key` in this table's naming.
    pub fn error(&self, key: &str, what: impl std::fmt::Display) -> ParamError {
        ParamError(format!("{} {what}", self.name(key)))
    }

    /// Fails on the first key that was never read, listing the valid ones.
    pub fn finish(&self, valid: &[&str]) -> Result<(), ParamError> {
        let used = self.used.borrow();
        match self.table.keys().find(|k| !used.contains(k.as_str())) {
            None => Ok(()),
            Some(k) => Err(ParamError(format!(
                "unknown key {}; valid keys: {}",
                self.name(k),
                valid.join(", ")
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn table(src: &str) -> toml::Table {
        src.parse().unwrap()
    }

    #[test]
    fn errors_name_the_key_the_value_and_the_valid_range() {
        let t = table("chunk_size = 50\nflag = 3\nratio = 0.7\nextra = 1");
        let p = Params::new(&t, "params");
        assert_eq!(
            p.usize_in("chunk_size", None, TARGET_TOKENS).unwrap_err().0,
            "params.chunk_size = 50 is out of range; valid: 100..=4096"
        );
        assert_eq!(
            p.bool_or("flag", false).unwrap_err().0,
            "params.flag = 3 is a integer; expected true or false"
        );
        assert!(p
            .f64_in("ratio", 0.1, OVERLAP_RATIO)
            .unwrap_err()
            .0
            .contains("params.ratio = 0.7 is out of range; valid: 0..=0.5"));
        assert_eq!(
            p.usize_in("missing", None, 1..=2).unwrap_err().0,
            "params.missing is required (an integer in 1..=2)"
        );
        assert_eq!(
            p.finish(&["chunk_size", "flag", "ratio"]).unwrap_err().0,
            "unknown key params.extra; valid keys: chunk_size, flag, ratio"
        );
    }

    #[test]
    fn defaults_apply_when_absent_and_nested_tables_name_their_path() {
        let t = table("overlap = { tokens = 9, typo = 1 }");
        let p = Params::new(&t, "params");
        assert_eq!(
            p.usize_in("chunk_size", Some(1000), TARGET_TOKENS),
            Ok(1000)
        );
        let o = p.table("overlap").unwrap().unwrap();
        assert_eq!(o.usize_in("tokens", None, 0..=10), Ok(9));
        assert_eq!(
            o.finish(&["tokens"]).unwrap_err().0,
            "unknown key params.overlap.typo; valid keys: tokens"
        );
        assert!(p.finish(&["chunk_size", "overlap"]).is_ok());
    }
}
