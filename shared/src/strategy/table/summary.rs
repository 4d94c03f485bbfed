//! The `summary` mode's digest of a table (the Chunking System specification TableChunker): columns,
//! row count, per-column value ranges or distinct values, the first rows,
//! in words for the embedder and as `facet_json` for filters.

use serde_json::{json, Value};

use crate::strategy::table::shape::Shape;

/// Distinct values listed per text column, at most.
const DISTINCT_SHOWN: usize = 8;
/// Rows quoted in the summary, at most.
const FIRST_ROWS: usize = 3;
/// Characters of one quoted cell, at most.
const CELL_CHARS: usize = 60;

/// A cell read as a number: thousands separators, currency and percent
/// signs dropped, `(12)` negative; `None` when it is not one.
fn number(cell: &str) -> Option<f64> {
    let t = cell.trim();
    let (neg, t) = match t.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
        Some(inner) => (true, inner),
        None => (false, t),
    };
    let cleaned: String = t
        .chars()
        .filter(|c| !matches!(c, ',' | '$' | '€' | '£' | '¥' | '₽' | '%' | ' ' | '\u{a0}'))
        .collect();
    if cleaned.is_empty() || !cleaned.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    let v: f64 = cleaned.parse().ok()?;
    v.is_finite().then_some(if neg { -v } else { v })
}

fn clip(s: &str) -> String {
    if s.chars().count() <= CELL_CHARS {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(CELL_CHARS).collect();
        t.push('…');
        t
    }
}

/// Per-column statistics: `numeric` (min and max as written) when at least
/// four in five non-empty cells are numbers, else `text` (distinct values in
/// order of first appearance).
fn column_stats(shape: &Shape) -> Vec<Value> {
    let width = shape
        .columns
        .len()
        .max(shape.rows.iter().map(|(_, c)| c.len()).max().unwrap_or(0));
    (0..width)
        .map(|i| {
            let name = shape
                .columns
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("column {}", i + 1));
            let values: Vec<&str> = shape
                .rows
                .iter()
                .filter_map(|(_, c)| c.get(i).map(String::as_str))
                .filter(|v| !v.is_empty())
                .collect();
            let numbers: Vec<(f64, &str)> = values
                .iter()
                .filter_map(|v| number(v).map(|n| (n, *v)))
                .collect();
            if !values.is_empty() && numbers.len() * 5 >= values.len() * 4 {
                let min = numbers.iter().min_by(|a, b| a.0.total_cmp(&b.0));
                let max = numbers.iter().max_by(|a, b| a.0.total_cmp(&b.0));
                json!({
                    "name": name,
                    "kind": "numeric",
                    "min": min.map(|m| m.1),
                    "max": max.map(|m| m.1),
                    "empty": shape.rows.len() - values.len(),
                })
            } else {
                let mut distinct: Vec<&str> = Vec::new();
                for v in &values {
                    if !distinct.contains(v) {
                        distinct.push(v);
                    }
                }
                json!({
                    "name": name,
                    "kind": "text",
                    "distinct_count": distinct.len(),
                    "distinct": distinct.iter().take(DISTINCT_SHOWN).map(|v| clip(v)).collect::<Vec<_>>(),
                    "empty": shape.rows.len() - values.len(),
                })
            }
        })
        .collect()
}

/// The digest (`facet_json`) and its wording (`embed_text`) of one table.
pub(crate) fn summarize(
    shape: &Shape,
    caption: Option<&str>,
    table_text: &str,
    table_ordinal: usize,
) -> (Value, String) {
    let stats = column_stats(shape);
    let first_rows: Vec<Vec<String>> = shape
        .rows
        .iter()
        .take(FIRST_ROWS)
        .map(|(_, c)| c.iter().map(|v| clip(v)).collect())
        .collect();
    let mut words = String::new();
    match caption {
        Some(c) if c.starts_with("Table") => {
            words.push_str(c.trim_end_matches('.'));
            words.push('.');
        }
        Some(c) => words.push_str(&format!("Table: {c}.")),
        None => words.push_str("Table."),
    }
    words.push_str(&format!(
        " {} rows; columns: {}.",
        shape.rows.len(),
        shape.columns.join(", ")
    ));
    for s in &stats {
        let name = s["name"].as_str().unwrap_or_default();
        if s["kind"] == "numeric" {
            words.push_str(&format!(
                " {name} from {} to {}.",
                s["min"].as_str().unwrap_or_default(),
                s["max"].as_str().unwrap_or_default()
            ));
        } else if let Some(d) = s["distinct"].as_array().filter(|d| !d.is_empty()) {
            let shown: Vec<&str> = d.iter().filter_map(Value::as_str).collect();
            let total = s["distinct_count"].as_u64().unwrap_or(0) as usize;
            let more = total.saturating_sub(shown.len());
            words.push_str(&format!(" {name}: {}", shown.join(", ")));
            if more > 0 {
                words.push_str(&format!(" and {more} more"));
            }
            words.push('.');
        }
    }
    if !first_rows.is_empty() {
        words.push_str(" First rows:");
        for row in &first_rows {
            let pairs: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(i, v)| match shape.columns.get(i) {
                    Some(c) => format!("{c} = {v}"),
                    None => v.clone(),
                })
                .collect();
            words.push_str(&format!(" {};", pairs.join(", ")));
        }
        words.pop();
        words.push('.');
    }
    let facet = json!({
        "mode": "summary",
        "table": table_ordinal,
        "caption": caption,
        "columns": shape.columns,
        "row_count": shape.rows.len(),
        "column_stats": stats,
        "first_rows": first_rows,
        "markdown": table_text,
    });
    (facet, words)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::strategy::table::shape::read;

    #[test]
    fn numbers_ranges_and_distinct_values_are_described() {
        let t = "| Region | Sales ($) |\n|---|---|\n| North | 1,200 |\n| South | (300) |\n| North | 50 |\n";
        let shape = read(t, 0..t.trim_end().len()).unwrap();
        let (facet, words) = summarize(&shape, Some("Sales by region"), t, 0);
        assert_eq!(facet["row_count"], 3);
        assert_eq!(facet["column_stats"][1]["min"], "(300)");
        assert_eq!(facet["column_stats"][1]["max"], "1,200");
        assert_eq!(facet["column_stats"][0]["distinct_count"], 2);
        assert!(words.starts_with("Table: Sales by region. 3 rows; columns: Region, Sales ($)."), "{words}");
        assert!(words.contains("Sales ($) from (300) to 1,200."), "{words}");
        assert!(words.contains("Region: North, South."), "{words}");
    }
}
