//! Text for messages: quoting input values, plurals, one bounded line, a
//! terminal-safe copy of input text. A leaf: every layer may use it, and
//! it uses nothing of aoitap's (docs/contract.md §3.2: messages are single-line,
//! escaped, and quote at most 80 bytes of any input value).

use std::borrow::Cow;

/// A name a stream or profile gives its producer (tool, version, schema,
/// command) is kept to this many bytes (longer ones cut, marked `…`): a
/// run holds its identity while it is open, and ten thousand open runs of
/// megabyte names would hold gigabytes; a name is shown, never compared
/// (docs/contract.md §3.2).
pub const IDENTITY_BYTES: usize = 1024;

/// `1.25 s`, `350 ms`.
pub fn seconds(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        format!("{:.2} s", ms as f64 / 1000.0)
    }
}

/// `n` in decimal, at the end of `out`: as `write!` would, without the
/// formatter (a per-run block writes a dozen; docs/contract.md §8.2).
pub fn push_number(out: &mut String, n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend(digits[at..].iter().map(|&d| char::from(d)));
}

pub fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// Input bytes quoted in a message: at most `QUOTE_BYTES` of them (cut on
/// a character boundary, the length said), as a JSON-like string literal
/// with every control character escaped, so a message stays one short
/// line whatever the input (docs/contract.md §3.2).
pub fn quote(s: &str) -> String {
    let head = prefix(s, QUOTE_BYTES);
    let mut q = format!("{head:?}");
    if head.len() < s.len() {
        q.push_str(&format!("… ({} bytes)", s.len()));
    }
    q
}

/// As `quote`, for a raw JSON value (a number, a literal, a container).
pub fn quote_raw(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(&raw[..raw.len().min(QUOTE_BYTES)]);
    let mut q = clean(&text).into_owned();
    if raw.len() > QUOTE_BYTES {
        q.push_str(&format!("… ({} bytes)", raw.len()));
    }
    q
}

/// A message made one line of bounded length: the last guard before a
/// message from anywhere (a file name, an OS error) is written.
pub fn one_line(s: &str) -> String {
    let head = prefix(s, MESSAGE_BYTES);
    let mut t = clean(head).into_owned();
    if head.len() < s.len() {
        t.push('…');
    }
    t
}

/// A JSON document's line breaks as spaces: they are whitespace between
/// tokens (a string holds none raw), so the document becomes one JSONL
/// line, its other bytes as they came (docs/contract.md §6.2).
pub fn breaks_as_spaces(doc: &mut [u8]) {
    let mut from = 0;
    while let Some(k) = memchr::memchr2(b'\n', b'\r', &doc[from..]) {
        doc[from + k] = b' ';
        from += k + 1;
    }
}

/// At most `max` bytes of `s`, cut on a character boundary.
pub fn prefix(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The most input bytes a message quotes.
pub const QUOTE_BYTES: usize = 80;

/// The longest message aoitap writes.
const MESSAGE_BYTES: usize = 512;

/// Text from the input, made safe for a terminal: control characters
/// (an ESC from a hostile stream) are shown escaped, never interpreted.
/// Text with nothing to escape is given back as it is: a report of ten
/// thousand runs cleans every identity and message it shows
/// (docs/contract.md §8.2).
pub fn clean(s: &str) -> Cow<'_, str> {
    let Some(at) = first_hidden(s) else {
        return Cow::Borrowed(s);
    };
    let mut t = String::with_capacity(s.len() + 8);
    t.push_str(&s[..at]);
    for c in s[at..].chars() {
        if hidden(c) {
            t.extend(c.escape_default());
        } else {
            t.push(c);
        }
    }
    Cow::Owned(t)
}

/// Controls, and the characters that reorder or break a terminal line
/// without being controls: every bidi control (the Arabic letter mark
/// U+061C, the marks, overrides and isolates), U+2028/2029.
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{61c}')
}

/// Where the first `hidden` character of `s` starts. Told by bytes: only
/// an ASCII control or the lead byte 0xC2 (U+0080-U+00BF, where the C1
/// controls are), 0xD8 (U+0600-U+063F, the Arabic letter mark) or 0xE2
/// (U+2000-U+2FFF, where the other marks are) can start one, so a
/// character is decoded only there, not at every byte of a message with
/// an ellipsis or a quote in it.
fn first_hidden(s: &str) -> Option<usize> {
    let suspect = |b: &u8| *b < 0x20 || *b == 0x7f || matches!(b, 0xc2 | 0xd8 | 0xe2);
    // Printable ASCII, most of every value shown, is passed over 16 bytes
    // at a time: a chunk is tested whole, with no branch per byte, which
    // the compiler makes a few vector compares (docs/contract.md §8.2).
    let printable = |c: &[u8]| {
        c.iter()
            .fold(true, |all, &b| all & (0x20..0x7f).contains(&b))
    };
    let bytes = s.as_bytes();
    let mut from = bytes
        .chunks(16)
        .position(|c| !printable(c))
        .map_or(bytes.len(), |k| k * 16);
    while let Some(k) = bytes[from..].iter().position(suspect) {
        let at = from + k;
        // A suspect byte is ASCII or a lead byte: `at` is a character's start.
        let c = s[at..].chars().next()?;
        if hidden(c) {
            return Some(at);
        }
        from = at + c.len_utf8();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wherever a hidden character falls, before, in or after a chunk of
    /// printable ASCII passed over whole, it is found.
    #[test]
    fn a_hidden_character_is_found_at_every_place() {
        for hidden in ["\u{1b}", "\u{7f}", "\u{85}", "\u{61c}", "\u{202e}"] {
            for at in 0..40 {
                for len in [at, at + 1, at + 17, 48] {
                    let mut s = "a".repeat(at);
                    s.push_str(hidden);
                    s.push_str(&"é~".repeat(len - at));
                    let escaped = format!("{}", hidden.chars().next().unwrap().escape_default());
                    assert_eq!(first_hidden(&s), Some(at), "{s:?}");
                    assert!(clean(&s).contains(&escaped), "{s:?}");
                }
                let plain = "a~ é…".repeat(at);
                assert_eq!(first_hidden(&plain), None, "{plain:?}");
            }
        }
    }

    #[test]
    fn control_characters_are_shown_escaped() {
        assert_eq!(clean("a\u{1b}[31mb"), "a\\u{1b}[31mb");
        assert_eq!(clean("plain"), "plain");
        assert_eq!(
            clean("caf\u{e9} \u{2026} \u{202e}x"),
            "caf\u{e9} \u{2026} \\u{202e}x"
        );
        assert_eq!(clean("\u{85}\u{a0}"), "\\u{85}\u{a0}");
        // The Arabic letter mark reorders as the other bidi marks do.
        assert_eq!(clean("run\u{61c} 123-456"), "run\\u{61c} 123-456");
        assert_eq!(clean("\u{600}\u{627}"), "\u{600}\u{627}");
    }

    /// The byte scan finds what a scan of every character finds: on
    /// text drawn mostly from around the hidden characters' lead bytes.
    #[test]
    fn clean_escapes_what_a_scan_of_every_character_would() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestRunner};
        let near = prop_oneof![
            any::<char>(),
            (0u32..0x20).prop_map(|c| char::from_u32(c).unwrap()),
            (0x7fu32..0xc0).prop_map(|c| char::from_u32(c).unwrap()),
            (0x2000u32..0x2080).prop_map(|c| char::from_u32(c).unwrap()),
            (0x600u32..0x640).prop_map(|c| char::from_u32(c).unwrap()),
            Just('a'),
        ];
        let mut runner = TestRunner::new(Config::with_cases(crate::proptest_cases() * 4));
        runner
            .run(&prop::collection::vec(near, 0..24), |cs| {
                let s: String = cs.into_iter().collect();
                let want: String = s
                    .chars()
                    .flat_map(|c| {
                        let e: Vec<char> = if hidden(c) {
                            c.escape_default().collect()
                        } else {
                            vec![c]
                        };
                        e
                    })
                    .collect();
                prop_assert_eq!(clean(&s), want);
                Ok(())
            })
            .unwrap();
    }
}
