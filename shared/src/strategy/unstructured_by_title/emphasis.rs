//! Python-Markdown's `*`/`_` emphasis (`DelimiterProcessor`): runs
//! classified as openers and closers by its flanking patterns (`_` not
//! inside words), paired on a stack (CommonMark's rule of three); the
//! paired delimiter characters are removed and an element boundary is left
//! where each emphasis opens and closes.

use super::stext::py_isspace;

/// `*` and `_` runs paired as openers and closers (the flanking rules
/// of Python-Markdown's `Delimiter` patterns, CommonMark's stack).
pub(super) fn emphasis(s: &str, mut mark: impl FnMut() -> String) -> String {
    let chars: Vec<char> = s.chars().collect();
    // (char index, length, char, can open, can close)
    let mut runs: Vec<(usize, usize, char, bool, bool)> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c != '*' && c != '_' {
            i += 1;
            continue;
        }
        let n = chars[i..].iter().take_while(|&&x| x == c).count();
        let before = i.checked_sub(1).map(|k| chars[k]);
        let after = chars.get(i + n).copied();
        let word = |x: Option<char>| x.is_some_and(|x| x.is_alphanumeric() || x == '_');
        let space = |x: Option<char>| x.is_none_or(py_isspace);
        let (open, close) = if c == '*' {
            (!space(after), before.is_some_and(|b| !py_isspace(b)))
        } else {
            (
                !space(after) && !word(before),
                before.is_some_and(|b| !py_isspace(b)) && !word(after),
            )
        };
        runs.push((i, n, c, open, close));
        i += n;
    }
    // Remaining delimiter counts, and where boundaries go.
    let mut left: Vec<usize> = runs.iter().map(|r| r.1).collect();
    let mut cut = vec![false; chars.len()];
    let mut bound = vec![false; chars.len() + 1];
    let mut stack: Vec<usize> = Vec::new();
    for k in 0..runs.len() {
        let (_, _, c, open, close) = runs[k];
        if close {
            while left[k] > 0 {
                let Some(pos) = stack.iter().rposition(|&o| {
                    runs[o].2 == c
                        && left[o] > 0
                        && !((runs[o].4 || open)
                            && (runs[o].1 + runs[k].1) % 3 == 0
                            && !(runs[o].1 % 3 == 0 && runs[k].1 % 3 == 0))
                }) else {
                    break;
                };
                let o = stack[pos];
                let use_n = if left[o] >= 2 && left[k] >= 2 { 2 } else { 1 };
                let (os, cs) = (runs[o].0 + left[o] - use_n, runs[k].0 + runs[k].1 - left[k]);
                cut[os..os + use_n].fill(true);
                cut[cs..cs + use_n].fill(true);
                bound[os + use_n] = true;
                bound[cs] = true;
                left[o] -= use_n;
                left[k] -= use_n;
                stack.truncate(pos + 1);
                if left[o] == 0 {
                    stack.pop();
                }
            }
        }
        if open && left[k] > 0 {
            stack.push(k);
        }
    }
    let mut out = String::new();
    for (x, &c) in chars.iter().enumerate() {
        if bound[x] {
            out.push_str(&mark());
        }
        if !cut[x] {
            out.push(c);
        }
    }
    if bound[chars.len()] {
        out.push_str(&mark());
    }
    out
}

