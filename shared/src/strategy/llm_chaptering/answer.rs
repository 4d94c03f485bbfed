//! Reading a model's answer: `{"boundaries": [3, 9, 14]}`, as the prompt
//! asks, or what models send instead (a code fence around it, a bare list,
//! numbers as strings, an answer cut off mid-list).

/// What an answer proposes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Proposal {
    /// Unit numbers, as the model wrote them (unchecked, in its order).
    pub units: Vec<i64>,
    /// Entries of the list that are not unit numbers (`"x"`, `2.5`, `null`).
    pub junk: usize,
    /// The list was cut off (no closing `]`): the last number, which may be
    /// cut too, is left out.
    pub truncated: bool,
}

/// Why an answer proposes nothing readable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Malformed {
    /// No `boundaries` list and no bare list of numbers.
    NoList,
}

/// Reads an answer. Strict JSON first (inside a code fence or not); then a
/// lenient scan after `"boundaries"` (or the first `[`) that salvages the
/// numbers of a truncated or otherwise broken list.
pub(crate) fn parse(answer: &str) -> Result<Proposal, Malformed> {
    let body = unfenced(answer);
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(body) {
        let list = match &v {
            serde_json::Value::Object(o) => o.get("boundaries").and_then(|b| b.as_array()),
            serde_json::Value::Array(a) => Some(a),
            _ => None,
        };
        if let Some(list) = list {
            let mut p = Proposal::default();
            for item in list {
                match number(item) {
                    Some(n) => p.units.push(n),
                    None => p.junk += 1,
                }
            }
            return Ok(p);
        }
    }
    lenient(body)
}

/// The text inside a Markdown code fence, if the answer is one.
fn unfenced(answer: &str) -> &str {
    let t = answer.trim();
    let Some(rest) = t.strip_prefix("```") else {
        return t;
    };
    // Drop the info string (`json`) and the closing fence.
    let rest = rest.split_once('\n').map_or("", |(_, r)| r);
    rest.trim_end().strip_suffix("```").unwrap_or(rest).trim()
}

/// An integer, or a string holding one.
fn number(v: &serde_json::Value) -> Option<i64> {
    match v {
        serde_json::Value::Number(n) => n.as_i64(),
        serde_json::Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Numbers after `"boundaries"` (else the first `[`) up to the closing `]`
/// or the end of the answer.
fn lenient(body: &str) -> Result<Proposal, Malformed> {
    let from = body
        .find("\"boundaries\"")
        .and_then(|k| body[k..].find('[').map(|b| k + b + 1))
        .or_else(|| body.find('[').map(|b| b + 1))
        .ok_or(Malformed::NoList)?;
    let list = &body[from..];
    let (inside, closed) = match list.find(']') {
        Some(end) => (&list[..end], true),
        None => (list, false),
    };
    let mut p = Proposal::default();
    let items: Vec<&str> = inside.split(',').collect();
    let last = items.len().saturating_sub(1);
    for (i, item) in items.iter().enumerate() {
        let t = item.trim().trim_matches('"').trim();
        if t.is_empty() {
            continue;
        }
        if !closed && i == last {
            // The answer stops here: this number may be cut short.
            p.truncated = true;
            continue;
        }
        match t.parse::<i64>() {
            Ok(n) => p.units.push(n),
            Err(_) => p.junk += 1,
        }
    }
    if !closed {
        p.truncated = true;
    }
    if p.units.is_empty() && p.junk > 0 {
        return Err(Malformed::NoList);
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn strict_json_fenced_or_bare() {
        assert_eq!(parse("{\"boundaries\": [3, 9]}").unwrap().units, vec![3, 9]);
        let fenced = "```json\n{\"boundaries\": [4, \"7\", \"x\", 2.5]}\n```";
        let p = parse(fenced).unwrap();
        assert_eq!((p.units, p.junk, p.truncated), (vec![4, 7], 2, false));
        assert_eq!(parse("[1, 2]").unwrap().units, vec![1, 2]);
        assert_eq!(parse("{\"boundaries\": []}").unwrap().units, Vec::<i64>::new());
    }

    #[test]
    fn a_cut_off_list_keeps_its_complete_numbers() {
        let p = parse("{\"boundaries\": [3, 9, 1").unwrap();
        assert_eq!((p.units, p.truncated), (vec![3, 9], true));
        let p = parse("Sure! Here they are: {\"boundaries\": [5, 12,").unwrap();
        assert_eq!((p.units, p.truncated), (vec![5, 12], true));
    }

    #[test]
    fn prose_without_a_list_is_malformed() {
        assert_eq!(parse("I cannot help with that."), Err(Malformed::NoList));
        assert_eq!(parse("{\"sections\": 3}"), Err(Malformed::NoList));
        assert_eq!(parse("[a, b]"), Err(Malformed::NoList));
        assert_eq!(parse(""), Err(Malformed::NoList));
    }
}
