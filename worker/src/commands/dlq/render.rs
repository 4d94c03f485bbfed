//! Terminal output of the `dlq` commands: a table, or one letter in full.

use std::io::Write;

use super::letter::DeadLetter;

fn cell(v: Option<&str>) -> String {
    v.unwrap_or("-").to_owned()
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// The readable table of `dlq list`.
pub fn write_table(out: &mut impl Write, letters: &[DeadLetter]) -> std::io::Result<()> {
    let header = [
        "ID",
        "TENANT",
        "DOCUMENT",
        "VERSION",
        "ERROR CODE",
        "ATTEMPTS",
        "FIRST FAILED",
        "LAST FAILED",
        "DETAIL",
    ];
    let rows: Vec<[String; 9]> = letters
        .iter()
        .map(|l| {
            [
                l.id.clone(),
                cell(l.tenant_id.as_deref()),
                shorten(&cell(l.document_id.as_deref()), 40),
                shorten(&cell(l.source_version_id.as_deref()), 24),
                cell(l.error_code.as_deref()),
                l.attempts.map_or_else(|| "-".to_owned(), |a| a.to_string()),
                cell(l.first_failed_at.as_deref()),
                cell(l.failed_at.as_deref()),
                shorten(&cell(l.error_detail.as_deref()), 80),
            ]
        })
        .collect();
    let mut widths = header.map(|h| h.chars().count());
    for row in &rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, (c, w)) in cells.iter().zip(widths).enumerate() {
            if i + 1 == cells.len() {
                s.push_str(c);
            } else {
                s.push_str(c);
                s.push_str(&" ".repeat(w - c.chars().count() + 2));
            }
        }
        s
    };
    writeln!(out, "{}", line(header.to_vec()))?;
    for row in &rows {
        writeln!(out, "{}", line(row.iter().map(String::as_str).collect()))?;
    }
    writeln!(out, "{} message(s)", rows.len())
}

/// The text (or JSON) of `dlq show`.
pub fn write_letter(out: &mut impl Write, l: &DeadLetter, json: bool) -> std::io::Result<()> {
    let body_json: Option<serde_json::Value> = serde_json::from_slice(&l.body).ok();
    let p = &l.properties;
    let props = serde_json::json!({
        "message_id": p.message_id().as_ref().map(|s| s.to_string()),
        "correlation_id": p.correlation_id().as_ref().map(|s| s.to_string()),
        "content_type": p.content_type().as_ref().map(|s| s.to_string()),
        "delivery_mode": p.delivery_mode(),
        "timestamp": p.timestamp(),
    });
    if json {
        let v = serde_json::json!({
            "summary": l,
            "properties": props,
            "headers": l.headers,
            "body": body_json.clone().unwrap_or_else(|| serde_json::Value::from(String::from_utf8_lossy(&l.body).into_owned())),
        });
        serde_json::to_writer_pretty(&mut *out, &v)?;
        return writeln!(out);
    }
    writeln!(out, "id: {}", l.id)?;
    writeln!(out, "body: {} bytes, sha256 {}", l.body_size, l.body_sha256)?;
    writeln!(out, "\nproperties:")?;
    if let Some(o) = props.as_object() {
        for (k, v) in o.iter().filter(|(_, v)| !v.is_null()) {
            writeln!(out, "  {k}: {v}")?;
        }
    }
    writeln!(out, "\nheaders:")?;
    let mut keys: Vec<_> = l.headers.keys().collect();
    keys.sort();
    for k in keys {
        writeln!(out, "  {k}: {}", l.headers[k])?;
    }
    writeln!(out, "\nbody:")?;
    match body_json {
        Some(v) => {
            serde_json::to_writer_pretty(&mut *out, &v)?;
            writeln!(out)
        }
        None => writeln!(out, "{}", String::from_utf8_lossy(&l.body)),
    }
}
