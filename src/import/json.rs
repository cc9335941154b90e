//! Small, total helpers over `serde_json::Value`: field access, text of content blocks,
//! compact serialisation and timestamps.

use serde_json::Value;

/// `value[key]` as a string.
pub(crate) fn str_at<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// `value[key]` as an array (empty when absent or not an array).
pub(crate) fn array_at<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    value.get(key).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// `value[key]` as an `i32` exit code.
pub(crate) fn i32_at(value: &Value, key: &str) -> Option<i32> {
    value.get(key).and_then(Value::as_i64).and_then(|n| i32::try_from(n).ok())
}

/// A JSON value as compact JSON text.
pub(crate) fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// Tool-call arguments as recorded: a string as is, anything else as compact JSON, `{}` if absent.
pub(crate) fn arguments_text(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => "{}".to_owned(),
        Some(other) => compact(other),
    }
}

/// A string id, or a number id written out; `None` when absent or empty.
pub(crate) fn id_text(value: Option<&Value>) -> Option<String> {
    match value {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    }
}

/// The text of message content: a string, or the texts of a list of blocks joined by newlines
/// (images become `[image]`); anything else is empty.
pub(crate) fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks.iter().filter_map(block_text).collect::<Vec<_>>().join("\n"),
        Some(Value::Object(_)) => content.and_then(block_text).unwrap_or_default(),
        _ => String::new(),
    }
}

/// The text of one content block (`{type: text, text}`, a bare string, or an image placeholder).
pub(crate) fn block_text(block: &Value) -> Option<String> {
    match block {
        Value::String(s) => Some(s.clone()),
        Value::Object(_) => match str_at(block, "type") {
            Some("image" | "image_url" | "input_image") => Some("[image]".to_owned()),
            _ => str_at(block, "text").map(str::to_owned),
        },
        _ => None,
    }
}

/// A record's timestamp in milliseconds since the Unix epoch: ISO-8601 text (`2025-09-07T09:52:03.071Z`,
/// `2026-05-04 23:23:06.072543978`; no zone = UTC) or a number of seconds (milliseconds when
/// it is that large). 0 when absent or unreadable.
pub(crate) fn timestamp_ms(value: Option<&Value>) -> u64 {
    match value {
        Some(Value::Number(n)) => match n.as_f64() {
            Some(x) if x.is_finite() && x >= 1e12 => x as u64,
            Some(x) if x.is_finite() && x > 0.0 => (x * 1000.0) as u64,
            _ => 0,
        },
        Some(Value::String(s)) => parse_iso(s).unwrap_or(0),
        _ => 0,
    }
}

fn parse_iso(text: &str) -> Option<u64> {
    let b = text.trim().as_bytes();
    let number = |range: std::ops::Range<usize>| -> Option<i64> {
        let digits = b.get(range)?;
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(digits).ok()?.parse().ok()
    };
    let at = |i: usize, allowed: &[u8]| b.get(i).is_some_and(|c| allowed.contains(c));
    if !(at(4, b"-") && at(7, b"-") && at(10, b"T ") && at(13, b":") && at(16, b":")) {
        return None;
    }
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut rest = b.get(19..)?;
    let mut millis = 0i64;
    if let Some((b'.', fraction)) = rest.split_first() {
        let digits = fraction.iter().take_while(|c| c.is_ascii_digit()).count();
        let first_three: String =
            fraction.iter().take(digits.min(3)).map(|&c| char::from(c)).chain(std::iter::repeat('0')).take(3).collect();
        millis = first_three.parse().unwrap_or(0);
        rest = fraction.get(digits..)?;
    }
    let offset = match rest {
        [] | [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), zone @ ..] => {
            let zone: Vec<u8> = zone.iter().copied().filter(|c| *c != b':').collect();
            if zone.len() != 4 || !zone.iter().all(u8::is_ascii_digit) {
                return None;
            }
            let minutes =
                std::str::from_utf8(&zone).ok()?.parse::<i64>().ok().map(|hhmm| hhmm / 100 * 60 + hhmm % 100)?;
            if *sign == b'+' { minutes * 60 } else { -minutes * 60 }
        }
        _ => return None,
    };
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset;
    u64::try_from(seconds * 1000 + millis).ok()
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn timestamps_of_every_format() {
        assert_eq!(timestamp_ms(Some(&json!("1970-01-01T00:00:00Z"))), 0);
        assert_eq!(timestamp_ms(Some(&json!("2025-09-07T09:52:03.071Z"))), 1_757_238_723_071);
        assert_eq!(timestamp_ms(Some(&json!("2026-05-04 23:23:06.072543978"))), 1_777_936_986_072);
        assert_eq!(timestamp_ms(Some(&json!("2025-04-30T16:32:54.707474"))), 1_746_030_774_707);
        assert_eq!(timestamp_ms(Some(&json!("2025-04-30T18:32:54+02:00"))), 1_746_030_774_000);
        assert_eq!(timestamp_ms(Some(&json!(1757015025.9723232))), 1_757_015_025_972);
        assert_eq!(timestamp_ms(Some(&json!(1_757_015_025_972u64))), 1_757_015_025_972);
        for bad in
            [json!("yesterday"), json!("2025-13-01T00:00:00"), json!("1969-12-31T23:59:59Z"), json!(-5), json!(null)]
        {
            assert_eq!(timestamp_ms(Some(&bad)), 0, "{bad}");
        }
        assert_eq!(timestamp_ms(None), 0);
    }

    #[test]
    fn content_text_reads_strings_and_blocks() {
        assert_eq!(content_text(Some(&json!("a"))), "a");
        assert_eq!(content_text(Some(&json!([{"type": "text", "text": "a"}, {"type": "image"}, 3]))), "a\n[image]");
        assert_eq!(content_text(Some(&json!(3))), "");
        assert_eq!(arguments_text(Some(&json!({"b": 1, "a": "x"}))), r#"{"a":"x","b":1}"#);
        assert_eq!(arguments_text(Some(&json!("{\"z\": 1}"))), "{\"z\": 1}");
    }
}
