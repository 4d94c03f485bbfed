//! Reading and writing AMQP header values, the names of the headers the
//! worker and the `dlq` commands write (docs/contract.md#failures), and headers as JSON.

use lapin::types::{AMQPValue, FieldTable, LongString, ShortString};

/// The error code (docs/contract.md#error-codes) of a dead letter.
pub const ERROR_CODE: &str = "x-error-code";
/// What was wrong and where.
pub const ERROR_DETAIL: &str = "x-error-detail";
/// Deliveries before it was dead-lettered.
pub const ATTEMPTS: &str = "x-attempts";
/// When it first failed (kept across replays).
pub const FIRST_FAILED_AT: &str = "x-first-failed-at";
/// When it was dead-lettered.
pub const FAILED_AT: &str = "x-failed-at";
/// The `dlq replay` run that republished it.
pub const REPLAY_ID: &str = "x-replay-id";
/// When that run republished it.
pub const REPLAYED_AT: &str = "x-replayed-at";
/// The broker's record of a message's dead-lettering (e.g. back from the
/// retry queue after its delay).
pub const DEATH: &str = "x-death";

/// A header table as a JSON object (for display).
pub fn table_to_json(table: &FieldTable) -> serde_json::Map<String, serde_json::Value> {
    table
        .inner()
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), value_to_json(v)))
        .collect()
}

/// One header value as JSON; types JSON lacks are shown by their debug form.
pub fn value_to_json(v: &AMQPValue) -> serde_json::Value {
    use serde_json::Value;
    match v {
        AMQPValue::Boolean(b) => Value::Bool(*b),
        AMQPValue::ShortShortInt(n) => Value::from(*n),
        AMQPValue::ShortShortUInt(n) => Value::from(*n),
        AMQPValue::ShortInt(n) => Value::from(*n),
        AMQPValue::ShortUInt(n) => Value::from(*n),
        AMQPValue::LongInt(n) => Value::from(*n),
        AMQPValue::LongUInt(n) => Value::from(*n),
        AMQPValue::LongLongInt(n) => Value::from(*n),
        AMQPValue::Timestamp(n) => Value::from(*n),
        AMQPValue::Float(f) => Value::from(f64::from(*f)),
        AMQPValue::Double(f) => Value::from(*f),
        AMQPValue::ShortString(s) => Value::from(s.as_str()),
        AMQPValue::LongString(s) => Value::from(String::from_utf8_lossy(s.as_bytes()).into_owned()),
        AMQPValue::FieldArray(a) => Value::Array(a.as_slice().iter().map(value_to_json).collect()),
        AMQPValue::FieldTable(t) => Value::Object(table_to_json(t)),
        other => Value::from(format!("{other:?}")),
    }
}

/// An integer header, whatever integer type the sender used.
pub fn get_u64(table: Option<&FieldTable>, key: &str) -> Option<u64> {
    let value = table?.inner().get(key)?;
    let n: i128 = match value {
        AMQPValue::ShortShortInt(v) => i128::from(*v),
        AMQPValue::ShortShortUInt(v) => i128::from(*v),
        AMQPValue::ShortInt(v) => i128::from(*v),
        AMQPValue::ShortUInt(v) => i128::from(*v),
        AMQPValue::LongInt(v) => i128::from(*v),
        AMQPValue::LongUInt(v) => i128::from(*v),
        AMQPValue::LongLongInt(v) => i128::from(*v),
        AMQPValue::Timestamp(v) => i128::from(*v),
        AMQPValue::LongString(s) => std::str::from_utf8(s.as_bytes()).ok()?.parse().ok()?,
        AMQPValue::ShortString(s) => s.as_str().parse().ok()?,
        _ => return None,
    };
    u64::try_from(n).ok()
}

/// A string header.
pub fn get_str(table: Option<&FieldTable>, key: &str) -> Option<String> {
    match table?.inner().get(key)? {
        AMQPValue::LongString(s) => Some(String::from_utf8_lossy(s.as_bytes()).into_owned()),
        AMQPValue::ShortString(s) => Some(s.as_str().to_owned()),
        _ => None,
    }
}

/// Sets a string header.
pub fn set_str(table: &mut FieldTable, key: &str, value: &str) {
    table.insert(
        ShortString::from(key.to_owned()),
        AMQPValue::LongString(LongString::from(value.to_owned())),
    );
}

/// Sets an integer header.
pub fn set_int(table: &mut FieldTable, key: &str, value: i64) {
    table.insert(
        ShortString::from(key.to_owned()),
        AMQPValue::LongLongInt(value),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_of_any_width_are_read() {
        let mut t = FieldTable::default();
        t.insert("a".into(), AMQPValue::LongInt(3));
        t.insert("b".into(), AMQPValue::LongLongInt(7));
        set_str(&mut t, "c", "12");
        assert_eq!(get_u64(Some(&t), "a"), Some(3));
        assert_eq!(get_u64(Some(&t), "b"), Some(7));
        assert_eq!(get_u64(Some(&t), "c"), Some(12));
        assert_eq!(get_u64(Some(&t), "missing"), None);
        assert_eq!(get_u64(None, "a"), None);
    }
}
