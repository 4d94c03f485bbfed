//! Reading and writing AMQP header values.

use lapin::types::{AMQPValue, FieldTable, LongString, ShortString};

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
