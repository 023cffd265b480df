//! What an input that is not JSON lines at all looks like from its first
//! line: compressed, or binary. One finding says so, in place of one per
//! line (docs/contract.md §3.1).

use std::io;

use super::{Checker, LastRun};
use crate::check::finding::Sink;
use crate::check::rules::Rule;
use crate::check::secrets;
use crate::input::scan::Line;

impl Checker<'_> {
    /// Whether the input is text, asked of its first line: a compressed
    /// or binary input is said once, and its lines are then counted to
    /// the run and not judged.
    #[cold]
    pub(super) fn is_text(&mut self, item: &Line<'_>, sink: &mut dyn Sink) -> io::Result<bool> {
        let why = match (self.text, item) {
            (None, Line::Complete { bytes, .. }) => not_text(bytes),
            (None, Line::Unterminated { bytes: Some(b), .. }) => not_text(b),
            _ => None,
        };
        if why.is_none() && self.text.is_none() {
            self.text = Some(true);
            return Ok(true);
        }
        let slot = self.runs.current(self.line);
        if let Some(msg) = why {
            self.report(sink, slot, Rule::StreamNotText, msg)?;
        }
        self.text = Some(false);
        self.last_run = LastRun::Slot(slot);
        self.runs.run(slot).unreadable_line();
        // Not judged, but what `--redact` writes over is still found in
        // a line that parses: a relay or a split never leaks it.
        if self.cfg.redact
            && let Some(ev) = item.event()
        {
            secrets::scan(&ev, &self.cfg.secret_names, &mut self.exposures);
        }
        Ok(false)
    }
}

/// Magic numbers of the compressed formats a log is kept in, and the
/// tool that reads each back.
const COMPRESSED: [(&[u8], &str, &str); 4] = [
    (b"\x1f\x8b", "gzip", "zcat"),
    (b"\x28\xb5\x2f\xfd", "zstd", "zstdcat"),
    (b"\xfd7zXZ\x00", "xz", "xzcat"),
    (b"BZh", "bzip2", "bzcat"),
];

/// Why the input whose first line is `first` is not text, if it is not:
/// a compressed file's magic number, or a NUL byte (no JSON text holds
/// one raw, and every executable and image does).
fn not_text(first: &[u8]) -> Option<String> {
    for (magic, name, reader) in COMPRESSED {
        if first.starts_with(magic)
            && (name != "bzip2" || first.get(3).is_some_and(u8::is_ascii_digit))
        {
            return Some(format!(
                "the input looks {name}-compressed, not JSON lines: decompress it first \
                 ({reader} FILE | aoitap ...); the rest of it is not judged"
            ));
        }
    }
    let le = first.len() >= 4 && first[1] == 0 && first[3] == 0 && first[0] != 0;
    let be = first.len() >= 4 && first[0] == 0 && first[2] == 0 && first[1] != 0;
    let utf16 = first.starts_with(b"\xff\xfe") || first.starts_with(b"\xfe\xff") || le || be;
    if utf16 {
        return Some(
            "the input looks UTF-16, not UTF-8 JSON lines (a Windows shell's `>` writes it): \
             convert it first (iconv -f UTF-16 -t UTF-8 FILE | aoitap ...); the rest of it is \
             not judged"
                .to_string(),
        );
    }
    let head = &first[..first.len().min(4096)];
    let starts_json = matches!(
        head.iter().find(|b| !b.is_ascii_whitespace()),
        Some(b'{' | b'[')
    );
    (!starts_json && head.contains(&0)).then(|| {
        "the input is not text (a NUL byte in its first line: a binary file?), not JSON lines; \
         the rest of it is not judged"
            .to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressed_and_binary_inputs_are_named() {
        assert!(not_text(b"\x1f\x8b\x08\x00").unwrap().contains("gzip"));
        assert!(
            not_text(b"\x28\xb5\x2f\xfd\x00")
                .unwrap()
                .contains("zstdcat")
        );
        assert!(not_text(b"\xfd7zXZ\x00\x00").unwrap().contains("xz"));
        assert!(not_text(b"BZh91AY").unwrap().contains("bzip2"));
        assert!(
            not_text(b"\x7fELF\x02\x01\x01\x00")
                .unwrap()
                .contains("not text")
        );
        assert!(not_text(b"\xff\xfe{\x00\"\x00").unwrap().contains("UTF-16"));
        assert!(not_text(b"{\x00\"\x00t\x00").unwrap().contains("UTF-16"));
        assert!(not_text(b"\x00{\x00\"\x00t").unwrap().contains("UTF-16"));
    }

    #[test]
    fn json_and_text_are_left_to_the_line_rules() {
        assert_eq!(not_text(br#"{"type":"aoi:meta"}"#), None);
        // A JSON line with a raw NUL is json.invalid, as any broken line.
        assert_eq!(not_text(b"{\"a\":\"\x00\"}"), None);
        assert_eq!(not_text(b"BZh is a word"), None);
        assert_eq!(not_text(b"plain text"), None);
        assert_eq!(not_text(b""), None);
    }
}
