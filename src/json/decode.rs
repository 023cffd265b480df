//! A validated JSON string's decoded bytes (docs/contract.md §3.2: decide on decoded
//! values).

use std::borrow::Cow;

/// Decode the inside of a validated JSON string to its exact bytes: UTF-8,
/// with a lone surrogate kept as its own three bytes (WTF-8), so that two
/// different strings never decode the same (`"\ud800"` is not `"\ud801"`).
pub fn decode(raw: &[u8]) -> Cow<'_, [u8]> {
    decode_as(raw, true)
}

/// As `decode`; a lone surrogate is kept as WTF-8 (`wtf8`) or becomes
/// U+FFFD.
fn decode_as(raw: &[u8], wtf8: bool) -> Cow<'_, [u8]> {
    if memchr::memchr(b'\\', raw).is_none() {
        return Cow::Borrowed(raw);
    }
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let c = raw[i];
        if c != b'\\' {
            out.push(c);
            i += 1;
            continue;
        }
        let esc = raw.get(i + 1).copied().unwrap_or(b'\\');
        i += 2;
        let byte = match esc {
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                let hi = hex4(raw, i).unwrap_or(0xfffd);
                i += 4;
                let mut code = hi;
                if (0xd800..0xdc00).contains(&hi)
                    && raw.get(i..i + 2) == Some(b"\\u")
                    && let Some(lo) = hex4(raw, i + 2).filter(|lo| (0xdc00..0xe000).contains(lo))
                {
                    code = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
                    i += 6;
                }
                if !wtf8 && (0xd800..0xe000).contains(&code) {
                    code = 0xfffd;
                }
                push_code(&mut out, code);
                continue;
            }
            other => other,
        };
        out.push(byte);
    }
    Cow::Owned(out)
}

/// Encode a code point (a lone surrogate too) in the UTF-8 pattern.
fn push_code(out: &mut Vec<u8>, code: u32) {
    match code {
        0..=0x7f => out.push(code as u8),
        0x80..=0x7ff => out.extend([0xc0 | (code >> 6) as u8, 0x80 | (code & 0x3f) as u8]),
        0x800..=0xffff => out.extend([
            0xe0 | (code >> 12) as u8,
            0x80 | ((code >> 6) & 0x3f) as u8,
            0x80 | (code & 0x3f) as u8,
        ]),
        _ => out.extend([
            0xf0 | (code >> 18) as u8,
            0x80 | ((code >> 12) & 0x3f) as u8,
            0x80 | ((code >> 6) & 0x3f) as u8,
            0x80 | (code & 0x3f) as u8,
        ]),
    }
}

/// Decode the inside of a validated JSON string as text. Lone surrogates
/// become U+FFFD: they are valid JSON (RFC 8259 §8.2) but not Unicode
/// scalars.
pub fn unescape(raw: &[u8]) -> Cow<'_, str> {
    match decode_as(raw, false) {
        // The walk checked the line as UTF-8: this is the common path.
        Cow::Borrowed(b) => match std::str::from_utf8(b) {
            Ok(s) => Cow::Borrowed(s),
            Err(_) => String::from_utf8_lossy(b),
        },
        Cow::Owned(v) => match String::from_utf8(v) {
            Ok(s) => Cow::Owned(s),
            Err(e) => Cow::Owned(String::from_utf8_lossy(e.as_bytes()).into_owned()),
        },
    }
}

/// The code unit a `\uXXXX` escape's four hex digits at `i` spell.
pub(super) fn hex4(b: &[u8], i: usize) -> Option<u32> {
    let h = b.get(i..i + 4)?;
    let mut v = 0;
    for &c in h {
        v = v * 16 + (c as char).to_digit(16)?;
    }
    Some(v)
}
