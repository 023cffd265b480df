//! Text for messages: quoting input values, plurals, one bounded line, a
//! terminal-safe copy of input text. A leaf: every layer may use it, and
//! it uses nothing of aoitap's (docs/contract.md §8: messages are single-line,
//! escaped, and quote at most 80 bytes of any input value).

use std::borrow::Cow;

/// `1.25 s`, `350 ms`.
pub fn seconds(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        format!("{:.2} s", ms as f64 / 1000.0)
    }
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
/// line whatever the input (docs/contract.md §8).
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
/// (docs/contract.md §23).
pub fn clean(s: &str) -> Cow<'_, str> {
    // Controls, and the characters that reorder or break a terminal line
    // without being controls: bidi overrides and isolates, U+2028/2029.
    let hidden = |c: char| {
        c.is_control()
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}')
    };
    // Printable ASCII holds none of them: most text is told by its bytes.
    let printable = s.bytes().all(|b| (b' '..=b'~').contains(&b));
    if printable || !s.chars().any(hidden) {
        return Cow::Borrowed(s);
    }
    let mut t = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if hidden(c) {
            t.extend(c.escape_default());
        } else {
            t.push(c);
        }
    }
    Cow::Owned(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_escaped() {
        assert_eq!(clean("a\u{1b}[31mb"), "a\\u{1b}[31mb");
        assert_eq!(clean("plain"), "plain");
    }
}
