//! Wall-clock timestamps in the RFC 3339 form every event and header uses.

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// Now, UTC, RFC 3339 (`2026-11-20T10:00:01.123456Z`).
pub fn now_rfc3339() -> String {
    format_rfc3339(OffsetDateTime::now_utc())
}

/// `t` in RFC 3339.
pub fn format_rfc3339(t: OffsetDateTime) -> String {
    // Formatting a valid OffsetDateTime as RFC 3339 only fails for years
    // outside 0..=9999, which `now` does not produce; fall back to the
    // debug form rather than panic.
    t.format(&Rfc3339).unwrap_or_else(|_| t.to_string())
}

/// Parses an RFC 3339 timestamp.
pub fn parse_rfc3339(s: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(s, &Rfc3339).ok()
}
