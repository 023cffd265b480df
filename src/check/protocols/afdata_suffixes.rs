//! AFDATA naming (`spec/agent-first-data.md` Part 1, "Suffixes"; docs/contract.md
//! §6.2): a key's suffix names its value's unit or format, and
//! `afdata.suffix-type` holds the value to it. `null` is exempt (the field
//! is unset, not mistyped). On for AFDATA runs, and with `--names afdata`
//! for any protocol.
//!
//! Decisions where the spec leaves room: a number's value, not its
//! spelling, decides (`3.0` is an integer, Part 2 "Type constraints");
//! durations take any number >= 0 (Part 2 lets `1.5` seconds be, docs/contract.md
//! §6.2 wants them non-negative); currency amounts are integers of either
//! sign (a refund is negative). A value under a secret-named key is not
//! looked at: it is `secret.*`'s, and is `***` once redacted.

use crate::json::{Children, Kind, Value};

/// What a suffix wants of its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::check) enum Want {
    Integer,
    /// An integer >= 0 (`_bytes`).
    Count,
    /// A number >= 0 (durations).
    Duration,
    Number,
    /// Digits, maybe after `-`, in a string (`_epoch_ns`).
    DecimalString,
    /// An integer, or one in a string (`_sats`, `_msats`).
    IntegerOrDecimal,
    DateTime,
    Date,
    Time,
    UtcOffset,
    Bcp47,
}

/// The suffix table, one row per suffix; the first that ends the key
/// decides (`_epoch_s` before `_s`, `_msats` before `_sats`,
/// `_rfc3339_date` before `_rfc3339`).
pub(in crate::check) const SUFFIXES: &[(&str, Want)] = &[
    ("_epoch_ns", Want::DecimalString),
    ("_epoch_ms", Want::Integer),
    ("_epoch_s", Want::Integer),
    ("_rfc3339_date", Want::Date),
    ("_rfc3339_time", Want::Time),
    ("_rfc3339", Want::DateTime),
    ("_utc_offset", Want::UtcOffset),
    ("_bcp47", Want::Bcp47),
    ("_bytes", Want::Count),
    ("_msats", Want::IntegerOrDecimal),
    ("_sats", Want::IntegerOrDecimal),
    ("_percent", Want::Number),
    ("_cents", Want::Integer),
    ("_micro", Want::Integer),
    ("_jpy", Want::Integer),
    ("_ns", Want::Duration),
    ("_us", Want::Duration),
    ("_ms", Want::Duration),
    ("_s", Want::Duration),
    ("_minutes", Want::Duration),
    ("_hours", Want::Duration),
    ("_days", Want::Duration),
];

impl Want {
    /// The type it wants, for a finding.
    pub(in crate::check) fn name(self) -> &'static str {
        match self {
            Want::Integer => "an integer",
            Want::Count => "an integer >= 0",
            Want::Duration => "a number >= 0",
            Want::Number => "a number",
            Want::DecimalString => {
                "a decimal integer string (nanoseconds since the epoch exceed JSON's safe integers)"
            }
            Want::IntegerOrDecimal => "an integer or a decimal integer string",
            Want::DateTime => "an RFC 3339 date-time with its offset, as 2026-02-14T10:30:00Z",
            Want::Date => "an RFC 3339 full-date, YYYY-MM-DD",
            Want::Time => "an RFC 3339 partial-time, HH:MM:SS[.fraction] with no offset",
            Want::UtcOffset => "\"UTC\" or +HH:MM / -HH:MM",
            Want::Bcp47 => "a BCP 47 language tag, as zh-CN",
        }
    }

    /// Whether `v` (not null) is what the suffix wants.
    pub(in crate::check) fn holds(self, v: &Value<'_>) -> bool {
        let number = v.kind() == Kind::Number;
        let text = || v.as_str();
        match self {
            Want::Integer => number && integral(v.raw()),
            Want::Count => number && integral(v.raw()) && !negative(v.raw()),
            Want::Duration => number && !negative(v.raw()),
            Want::Number => number,
            Want::DecimalString => text().is_some_and(|s| decimal(&s)),
            Want::IntegerOrDecimal => {
                (number && integral(v.raw())) || text().is_some_and(|s| decimal(&s))
            }
            Want::DateTime => text().is_some_and(|s| date_time(s.as_bytes())),
            Want::Date => text().is_some_and(|s| date(s.as_bytes())),
            Want::Time => text().is_some_and(|s| time(s.as_bytes()) == Some(s.len())),
            Want::UtcOffset => text().is_some_and(|s| s == "UTC" || offset(s.as_bytes())),
            Want::Bcp47 => text().is_some_and(|s| bcp47(&s)),
        }
    }
}

/// The row of `key`'s suffix, if it has one.
pub(in crate::check) fn suffix_of(key: &str) -> Option<(&'static str, Want)> {
    SUFFIXES.iter().copied().find(|(s, _)| key.ends_with(s))
}

/// A field whose value its suffix does not allow: its path (`result.
/// latency_ms`, `items[2].size_bytes`), its suffix and what it wants.
pub(in crate::check) struct Mistyped<'a> {
    pub path: String,
    pub suffix: &'static str,
    pub want: Want,
    pub value: Value<'a>,
}

/// Mistyped fields named per event; the rest are counted.
pub(in crate::check) const NAMED: usize = 100;

/// A path's end, as a finding names it: a field 50,000 levels deep is not
/// named by 150 KB of brackets (each finding would hold a copy).
const PATH_SHOWN: usize = 160;

/// The mistyped fields of `root`, in order: the first `NAMED`, and how
/// many more there are. `secret(key)`: a key whose value is a secret, not
/// looked into.
pub(in crate::check) fn mistyped<'a>(
    root: &Value<'a>,
    secret: impl Fn(&str) -> bool,
) -> (Vec<Mistyped<'a>>, u64) {
    let mut found = vec![];
    let mut more = 0;
    // An explicit stack, not recursion: nesting is bounded only by the
    // line (json/mod.rs), and the call stack must not be.
    let mut stack: Vec<(Children<'a>, usize, u64)> = vec![(root.children(), 0, 0)];
    let mut path = String::new();
    while let Some((kids, base, index)) = stack.last_mut() {
        let Some((key, value)) = kids.next() else {
            stack.pop();
            continue;
        };
        path.truncate(*base);
        let object = kids.is_object();
        if object {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(&key);
        } else {
            path.push_str(&format!("[{index}]"));
            *index += 1;
        }
        if object && secret(&key) {
            continue;
        }
        if object
            && value.kind() != Kind::Null
            && let Some((suffix, want)) = suffix_of(&key)
            && !want.holds(&value)
        {
            if found.len() == NAMED {
                more += 1;
            } else {
                found.push(Mistyped {
                    path: shown(&path),
                    suffix,
                    want,
                    value,
                });
            }
        }
        if matches!(value.kind(), Kind::Object | Kind::Array) {
            stack.push((value.children(), path.len(), 0));
        }
    }
    (found, more)
}

/// `path`, or its last `PATH_SHOWN` bytes or so after an ellipsis.
fn shown(path: &str) -> String {
    if path.len() <= PATH_SHOWN {
        return path.to_string();
    }
    let mut from = path.len() - PATH_SHOWN;
    while !path.is_char_boundary(from) {
        from += 1;
    }
    format!("…{}", &path[from..])
}

/// A JSON number's value is whole: `3`, `3.0`, `1e3`, `-2`; not `1.5`.
fn integral(raw: &[u8]) -> bool {
    if !raw.iter().any(|b| matches!(b, b'.' | b'e' | b'E')) {
        return true;
    }
    std::str::from_utf8(raw)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

/// Below zero (`-0` is zero).
fn negative(raw: &[u8]) -> bool {
    raw.first() == Some(&b'-')
        && std::str::from_utf8(raw)
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .is_none_or(|f| f != 0.0)
}

fn decimal(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// `n` ASCII digits at the start of `b`, as a number.
fn digits(b: &[u8], n: usize) -> Option<u32> {
    let d = b.get(..n)?;
    d.iter()
        .all(u8::is_ascii_digit)
        .then(|| d.iter().fold(0, |a, x| a * 10 + u32::from(x - b'0')))
}

/// `YYYY-MM-DD`, a day the month has.
fn date(b: &[u8]) -> bool {
    date_prefix(b) && b.len() == 10
}

fn date_prefix(b: &[u8]) -> bool {
    let (Some(y), Some(m), Some(d)) = (digits(b, 4), b.get(5..).and_then(|r| digits(r, 2)), {
        b.get(8..).and_then(|r| digits(r, 2))
    }) else {
        return false;
    };
    if b[4] != b'-' || b[7] != b'-' || !(1..=12).contains(&m) {
        return false;
    }
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    (1..=days).contains(&d)
}

/// `HH:MM:SS[.fraction]` at the start of `b` (no leap second): how many
/// bytes it is.
fn time(b: &[u8]) -> Option<usize> {
    let (h, m, s) = (
        digits(b, 2)?,
        digits(b.get(3..)?, 2)?,
        digits(b.get(6..)?, 2)?,
    );
    if b[2] != b':' || b[5] != b':' || h > 23 || m > 59 || s > 59 {
        return None;
    }
    let mut end = 8;
    if b.get(8) == Some(&b'.') {
        let fraction = b[9..].iter().take_while(|c| c.is_ascii_digit()).count();
        if fraction == 0 {
            return None;
        }
        end = 9 + fraction;
    }
    Some(end)
}

/// `+HH:MM` or `-HH:MM`, exactly.
fn offset(b: &[u8]) -> bool {
    b.len() == 6
        && matches!(b[0], b'+' | b'-')
        && b[3] == b':'
        && digits(&b[1..], 2).is_some_and(|h| h <= 23)
        && digits(&b[4..], 2).is_some_and(|m| m <= 59)
}

/// A full-date, `T` or `t`, a partial-time, and an offset: `Z`, `z` or
/// `±HH:MM`.
fn date_time(b: &[u8]) -> bool {
    if b.len() < 11 || !date_prefix(b) || !matches!(b[10], b'T' | b't') {
        return false;
    }
    let rest = &b[11..];
    let Some(end) = time(rest) else {
        return false;
    };
    matches!(&rest[end..], b"Z" | b"z") || offset(&rest[end..])
}

/// BCP 47's structure: ASCII alphanumeric subtags of 1 to 8, joined by
/// `-`, the first 2 or 3 letters (the registry is not consulted, as
/// `afdata lint` does not).
fn bcp47(s: &str) -> bool {
    let mut subtags = s.split('-');
    let primary = subtags.next().unwrap_or("");
    (2..=3).contains(&primary.len())
        && primary.bytes().all(|b| b.is_ascii_alphabetic())
        && subtags
            .all(|t| (1..=8).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_alphanumeric()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{Arena, Parser};

    fn check(line: &str) -> Vec<String> {
        let mut arena = Arena::default();
        let index = Parser::new().parse(line.as_bytes(), &mut arena).unwrap();
        let ev = index.event(line.as_bytes(), &arena);
        mistyped(&ev.as_value(), |k| k.ends_with("_secret"))
            .0
            .into_iter()
            .map(|m| m.path)
            .collect()
    }

    #[test]
    fn many_deep_mistyped_fields_are_named_briefly_and_counted() {
        let fields: Vec<String> = (0..150).map(|i| format!(r#""k{i}_ms":"x""#)).collect();
        let line = format!(
            r#"{{"kind":"result","result":{}{{{}}}{}}}"#,
            "[".repeat(500),
            fields.join(","),
            "]".repeat(500)
        );
        let mut arena = Arena::default();
        let index = Parser::new().parse(line.as_bytes(), &mut arena).unwrap();
        let ev = index.event(line.as_bytes(), &arena);
        let (found, more) = mistyped(&ev.as_value(), |_| false);
        assert_eq!((found.len(), more), (NAMED, 50));
        assert!(found[0].path.starts_with('…') && found[0].path.ends_with("[0].k0_ms"));
        assert!(found[0].path.len() < 200, "{}", found[0].path);
    }

    #[test]
    fn each_suffix_holds_its_value_to_its_type() {
        let bad = [
            r#"{"latency_ms":"142"}"#,
            r#"{"file_size_bytes":-1}"#,
            r#"{"expires_rfc3339":"2026-02-14T10:30:00"}"#,
            r#"{"language_bcp47":"zh_CN"}"#,
            r#"{"created_epoch_ns":1707868800000000000}"#,
            r#"{"price_usd_cents":9.99}"#,
            r#"{"timezone_utc_offset":"Asia/Shanghai"}"#,
            r#"{"due_rfc3339_date":"2026-6-13"}"#,
            r#"{"open_rfc3339_time":"09:30:00Z"}"#,
            r#"{"cpu_percent":"85%"}"#,
            r#"{"balance_msats":1.5}"#,
            r#"{"created_at_epoch_ms":1707868800000.5}"#,
            r#"{"timeout_s":-3}"#,
            r#"{"due_rfc3339_date":"2025-02-29"}"#,
            r#"{"at_rfc3339":"2026-02-14 10:30:00Z"}"#,
            r#"{"at_rfc3339":"2026-02-14T10:30:60Z"}"#,
            r#"{"language_bcp47":"chinese"}"#,
            r#"{"price_jpy":"1500"}"#,
        ];
        for line in bad {
            assert_eq!(check(line).len(), 1, "{line}");
        }
        let good = [
            r#"{"latency_ms":142}"#,
            r#"{"latency_ms":1.5}"#,
            r#"{"file_size_bytes":0}"#,
            r#"{"file_size_bytes":3.0}"#,
            r#"{"expires_rfc3339":"2026-02-14T10:30:00Z"}"#,
            r#"{"expires_rfc3339":"2026-02-14t10:30:00.5+08:00"}"#,
            r#"{"language_bcp47":"zh-CN"}"#,
            r#"{"language_bcp47":"zz-ZZ"}"#,
            r#"{"created_epoch_ns":"1707868800000000000"}"#,
            r#"{"price_usd_cents":999}"#,
            r#"{"refund_usd_cents":-999}"#,
            r#"{"timezone_utc_offset":"+08:00"}"#,
            r#"{"timezone_utc_offset":"UTC"}"#,
            r#"{"due_rfc3339_date":"2024-02-29"}"#,
            r#"{"open_rfc3339_time":"09:30:00.123"}"#,
            r#"{"cpu_percent":-5.5}"#,
            r#"{"balance_msats":"97900"}"#,
            r#"{"balance_sats":1234}"#,
            r#"{"latency_ms":null,"expires_rfc3339":null}"#,
            r#"{"timeout_s":-0}"#,
            r#"{"status":"ok","plain":"x"}"#,
        ];
        for line in good {
            assert_eq!(check(line), Vec::<String>::new(), "{line}");
        }
    }

    #[test]
    fn paths_name_the_field_at_any_depth_and_secrets_are_not_looked_into() {
        let line = r#"{"result":{"items":[{"size_bytes":"1"},{"size_bytes":2}],"t_ms":"x"},"token_secret":{"a_ms":"x"}}"#;
        assert_eq!(check(line), ["result.items[0].size_bytes", "result.t_ms"]);
    }
}
