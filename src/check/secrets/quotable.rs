//! What a report may quote of what it did not write (a tool's stderr, a
//! line of its stdout, a jq error): a report goes to CI logs, and a secret
//! must not. Redacting values after names proved a losing game
//! (`{'password': 'x'}`, `"secret" : "x"`, `Authorization:Bearer x`, `%3D`,
//! PEM blocks ...), so a text that names anything secret-looking is not
//! quoted at all; the user runs the command to see it (lint, filter).

use super::names::is_sensitive_name;
use crate::text::quote_raw;

/// `text` when it may be quoted: it names nothing secret-looking (by the
/// names `meta.args` redaction treats as sensitive), holds no URL userinfo
/// and no PEM block.
pub fn quotable(text: &str) -> Option<&str> {
    let named = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .any(|w| !w.is_empty() && is_sensitive_name(w));
    let pem = text.contains("-----BEGIN");
    (!named && !has_userinfo(text) && !pem).then_some(text)
}

/// Whether `text` holds a URL with userinfo (`https://user:pass@host`).
pub fn has_userinfo(text: &str) -> bool {
    text.split("://").skip(1).any(|rest| {
        rest.split(['/', ' ', '"', '\''])
            .next()
            .is_some_and(|h| h.contains('@'))
    })
}

/// `text` quoted, or what stands for it when it may not be.
pub fn quote_or_withhold(text: &str) -> String {
    match quotable(text) {
        Some(t) => t.to_string(),
        None => "(not quoted: it names something secret-looking)".to_string(),
    }
}

/// A JSON value (its raw text) as a finding may name it: a scalar quoted,
/// unless it names something secret-looking; an object or an array by its
/// kind alone, as it may hold anything, a secret under any name included.
/// Out of line, and given the bytes alone: only findings call it, and a
/// protocol's `event` must not pay for it on every line.
#[inline(never)]
pub fn value(raw: &[u8]) -> String {
    match raw.first() {
        Some(b'{') => "an object".to_string(),
        Some(b'[') => "an array".to_string(),
        _ => {
            let quoted = quote_raw(raw);
            match quotable(&quoted) {
                Some(_) => quoted,
                None => "a value not quoted (it names something secret-looking)".to_string(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_naming_a_secret_is_not_quoted() {
        for leak in [
            "error: token: ghp_S1 expired",
            "config={'password': 'S1', 'api_key': 'S2'}",
            r#"{"headers":{"Authorization":"Bearer S18"}}"#,
            "Authorization:Bearer S6",
            r#""secret" : "S11""#,
            "password = S16",
            "private_key=-----BEGIN S23",
            "client_secret%3DS15",
            "url https://user:S6@host/x",
            "--token\tS5",
        ] {
            assert_eq!(quotable(leak), None, "{leak}");
        }
        for fine in [
            "error: please log in first",
            "the author: Ann",
            "see https://example.com/docs@v2",
        ] {
            assert_eq!(quotable(fine), Some(fine), "{fine}");
        }
    }

    #[test]
    fn a_value_is_quoted_only_when_it_is_a_harmless_scalar() {
        let doc = br#"{"o":{"api_secret":"S1"},"a":["S2_secret"],"n":3,"s":"token S3","t":"slow"}"#;
        let mut arena = crate::json::Arena::default();
        let index = crate::json::Parser::new().parse(doc, &mut arena).unwrap();
        let ev = index.event(doc, &arena);
        let said = |k: &str| value(ev.get(k).unwrap().raw());
        assert_eq!(said("o"), "an object");
        assert_eq!(said("a"), "an array");
        assert_eq!(said("n"), "3");
        assert!(!said("s").contains("S3"), "{}", said("s"));
        assert_eq!(said("t"), "\"slow\"");
    }
}
