//! The only JSON reader on the input side, and the decoded view of a line.
//!
//! A line is checked against strict RFC 8259 on UTF-8 bytes, and only that
//! (spec §2): numbers of any size and escaped lone surrogates are valid, and
//! nesting depth is limited only by the line, kept on a bit stack rather
//! than the call stack, so no input can exhaust it. The same single pass
//! validates UTF-8 (inside strings, the only place a byte over 0x7F may
//! stand), notices ANSI escapes, and records an index of the top-level
//! members (and of the members of a top-level `aoi` object) into an arena
//! its batch owns. Every consumer reads that one index through [`Event`]:
//! nothing re-parses a line, and nothing is allocated per line once the
//! arenas are warm.
//!
//! Decisions are made on decoded values (docs/contract.md §3.2): keys are matched after
//! unescaping, so `"typ\u0065"` is `type`, and [`Value::decoded`] gives a
//! string's exact decoded bytes (a lone surrogate kept distinct, as WTF-8).
//! Escapes are rare, so the raw bytes are used whenever they hold none.
//!
//! Why a walker of our own, and neither serde_json nor simd-json: serde_json's
//! defaults reject valid input (exponents past f64, lone surrogates, depth
//! over 128) and skip the UTF-8 check inside values it ignores, and neither
//! hands back where each member stands in the line, which strip-envelope
//! needs to splice bytes without re-serialising. simd-json also rewrites its
//! input in place (we relay those bytes) and, measured on the reference
//! stream's ~200-byte lines, was no faster than serde_json: its stage-one
//! index pays off on long documents, not on many short ones. The figures
//! that decided it are `cargo bench -p aoitap-benches` (group `parse`,
//! which also times serde_json on the same lines) and
//! `benches/compare.sh`.

mod decode;
mod index;
mod nesting;
mod stops;
mod view;
mod walk;

pub use decode::{decode, unescape};
pub use index::{Arena, Event, Index, JsonError, Kind, Member, Uint, Value};
pub use nesting::Nesting;
pub use stops::Stops;
pub use view::{Aoi, Children};
pub use walk::Parser;

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::index::MAX_MEMBERS;
    use super::*;

    fn valid(s: &[u8]) -> bool {
        Parser::new().parse(s, &mut Arena::default()).is_ok()
    }

    /// Parse `line` and hand its event to `f`.
    fn with<R>(line: &[u8], f: impl FnOnce(Event<'_>) -> R) -> R {
        let mut arena = Arena::default();
        let index = Parser::new().parse(line, &mut arena).unwrap();
        f(index.event(line, &arena))
    }

    fn parse_err(line: &[u8]) -> Option<JsonError> {
        Parser::new().parse(line, &mut Arena::default()).err()
    }

    #[test]
    fn strict_rfc_8259() {
        for ok in [
            &b"{}"[..],
            b" {\"a\" : [1, -0.5e+3, true, false, null, \"x\"]} ",
            b"1E400",
            b"1180591620717411303424",
            b"\"\\ud800\"",
            b"[\"\\u001b[31m\"]",
            b"{\"a\":{}}\r",
        ] {
            assert!(valid(ok), "{}", String::from_utf8_lossy(ok));
        }
        for bad in [
            &b""[..],
            b"NaN",
            b"+1",
            b"01",
            b"1.",
            b".5",
            b"1e",
            b"[1,]",
            b"{\"a\":1,}",
            b"\"a\tb\"",
            b"\"\\x\"",
            b"\"\\u12\"",
            b"{\"a\" 1}",
            b"{1:2}",
            b"[1 2]",
            b"{}}",
            b"\0",
            b"\"\xff\"",
            b"\xef\xbb\xbf{}",
            b"tru",
            b"[",
            b"\"abc",
        ] {
            assert!(!valid(bad), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn deep_nesting_does_not_use_the_call_stack() {
        let n = 1_000_000;
        let mut s = vec![b'['; n];
        s.extend(std::iter::repeat_n(b']', n));
        assert!(valid(&s));
        s.pop();
        assert!(!valid(&s));
    }

    #[test]
    fn columns_point_at_the_fault() {
        assert_eq!(
            parse_err(b"{\"a\":01}"),
            Some(JsonError::Syntax {
                column: 7,
                expected: "',' or '}' after an object member"
            })
        );
        assert_eq!(
            parse_err(b"{\"a\":\"\xc3\"}"),
            Some(JsonError::Utf8 { column: 7 })
        );
        // A syntax fault before a bad byte: the bad byte names the cause.
        assert_eq!(
            parse_err(b"{\"a\" 1, \"\xff\"}"),
            Some(JsonError::Utf8 { column: 10 })
        );
    }

    /// One pass for many keys finds what a lookup of each finds: the
    /// first of a repeated key, an escaped key by its decoded name, and
    /// past the index's bound, from the line itself.
    #[test]
    fn get_each_finds_what_get_finds() {
        let mut wide = String::from("{");
        for i in 0..MAX_MEMBERS + 3 {
            wide.push_str(&format!("\"k{i}\":{i},"));
        }
        wide.push_str("\"ok\":false}");
        for line in [
            &br#"{"ok":true,"reason":"x","ok":false,"r\u0065ason":"y"}"#[..],
            br#"{"type":"aoi:summary","aoi":{"seq":1},"elapsed_ms":5,"next_cursor":null}"#,
            br#"{}"#,
            wide.as_bytes(),
        ] {
            with(line, |ev| {
                let keys = ["ok", "reason", "elapsed_ms", "next_cursor", "k4097", "nope"];
                let raw = |v: Option<Value<'_>>| v.map(|v| v.raw().to_vec());
                let each = ev.get_each(keys).map(raw);
                assert_eq!(each, keys.map(|k| raw(ev.get(k))));
                assert_eq!(
                    ev.get_each(["type", "ok"]).map(raw),
                    ["type", "ok"].map(|k| raw(ev.get(k)))
                );
            });
        }
    }

    #[test]
    fn members_and_envelope() {
        let line = br#"{"type":"hit","aoi":{"seq":3,"run":"R\u0031","x":[1,{"seq":9}]},"n":{"aoi":{"seq":1}}}"#;
        with(line, |ev| {
            assert!(ev.is_object());
            assert_eq!(ev.ty().unwrap(), "hit");
            let Aoi::Object { seq, run } = ev.aoi() else {
                panic!()
            };
            assert_eq!(seq.unwrap().as_uint(), Uint::Int(3));
            assert_eq!(run.unwrap().as_str().unwrap(), "R1");
            assert_eq!(&run.unwrap().decoded().unwrap()[..], b"R1");
            assert_eq!(ev.get("n").unwrap().raw(), br#"{"aoi":{"seq":1}}"#);
            assert!(ev.duplicate_reserved_key().is_none());
            assert!(!ev.has_ansi());
        });
    }

    #[test]
    fn escaped_keys_and_types_are_decoded() {
        with(
            br#"{"t\u0079pe":"\u0061oi:meta","\u0061oi":{"s\u0065q":0}}"#,
            |ev| {
                assert_eq!(ev.ty().unwrap(), "aoi:meta");
                let Aoi::Object { seq, .. } = ev.aoi() else {
                    panic!()
                };
                assert_eq!(seq.unwrap().uint(), Some(0));
            },
        );
        // A value the walk saw plain is borrowed; an escaped one decoded.
        with(br#"{"aoi":{"run":"R\u0031"},"type":"hit"}"#, |ev| {
            let Aoi::Object { run, .. } = ev.aoi() else {
                panic!()
            };
            assert_eq!(run.unwrap().decoded().unwrap().as_ref(), b"R1");
            let ty = ev.get("type").unwrap().decoded().unwrap();
            assert!(matches!(ty, Cow::Borrowed(b"hit")));
        });
    }

    #[test]
    fn a_line_past_the_index_cap_reads_the_same() {
        let mut line = br#"{"type":"hit","#.to_vec();
        for i in 0..MAX_MEMBERS + 10 {
            line.extend_from_slice(format!("\"k{i}\":{i},").as_bytes());
        }
        line.extend_from_slice(br#""aoi":{"seq":1},"last":"x","k3":9}"#);
        let mut arena = Arena::default();
        let index = Parser::new().parse(&line, &mut arena).unwrap();
        assert!(arena.top.len() <= MAX_MEMBERS + 4, "{}", arena.top.len());
        let ev = index.event(&line, &arena);
        assert_eq!(ev.ty().unwrap(), "hit");
        assert_eq!(ev.get("last").unwrap().as_str().unwrap(), "x");
        assert_eq!(ev.get("k4100").unwrap().uint(), Some(4100));
        assert_eq!(ev.count("k3"), 2);
        let (a, b) = ev.aoi_cut().unwrap();
        assert_eq!(&line[a..b], br#""aoi":{"seq":1},"#);
        let Aoi::Object { seq, .. } = ev.aoi() else {
            panic!()
        };
        assert_eq!(seq.unwrap().uint(), Some(1));
    }

    #[test]
    fn the_aoi_cut_takes_one_comma() {
        for (line, want) in [
            (&br#"{"aoi":{},"type":"a"}"#[..], &br#"{"type":"a"}"#[..]),
            (br#"{"type":"a" , "aoi" : {} }"#, br#"{"type":"a"  }"#),
            (br#"{"type":"a","aoi":{},"b":1}"#, br#"{"type":"a","b":1}"#),
            (br#"{ "aoi":1 }"#, br#"{  }"#),
        ] {
            with(line, |ev| {
                let (a, b) = ev.aoi_cut().unwrap();
                let cut = [&line[..a], &line[b..]].concat();
                assert_eq!(cut, want, "{}", String::from_utf8_lossy(line));
            });
        }
    }

    #[test]
    fn duplicates_are_seen_through_escapes() {
        with(br#"{"type":"a","typ\u0065":"b"}"#, |ev| {
            assert_eq!(ev.duplicate_reserved_key(), Some("type"))
        });
        with(br#"{"type":"a","aoi":{"seq":1,"seq":2}}"#, |ev| {
            assert_eq!(ev.duplicate_reserved_key(), Some("aoi.seq"))
        });
        with(br#"{"ok":true,"o\u006b":false}"#, |ev| {
            assert_eq!(ev.count("ok"), 2)
        });
    }

    #[test]
    fn reserved_names_are_counted_as_the_line_holds_them() {
        for line in [
            &br#"{"type":"a","aoi":{"seq":1}}"#[..],
            br#"{"b":1}"#,
            br#"{"typ\u0065":"a","aoi":1,"x":{"type":2}}"#,
            br#"{"type":"a","typ\u0065":"b","aoi":{},"aoi":{}}"#,
            br#"{"aoi":{"seq":1,"seq":2},"type":1,"type":2,"type":3}"#,
            br#"{"type":"a","aoi":{"run":"r","run":"s"}}"#,
        ] {
            with(line, |ev| {
                for key in ["type", "aoi", "b"] {
                    let whole = ev.as_value().count(key);
                    assert_eq!(
                        ev.count(key),
                        whole,
                        "{key} in {}",
                        String::from_utf8_lossy(line)
                    );
                }
            });
        }
    }

    #[test]
    fn ansi_in_strings() {
        assert!(with(br#"{"m":"\u001b[31mred"}"#, |ev| ev.has_ansi()));
        assert!(with("{\"m\":\"\u{9b}31m\"}".as_bytes(), |ev| ev.has_ansi()));
        assert!(!with(br#"{"m":"\\u001b"}"#, |ev| ev.has_ansi()));
        assert!(!with("{\"m\":\"caf\u{e9}\"}".as_bytes(), |ev| ev.has_ansi()));
    }

    #[test]
    fn utf8_is_checked_in_one_pass() {
        for ok in [
            "\"caf\u{e9}\"",
            "\"\u{10ffff}\u{800}\u{7ff}\"",
            "[\"\u{1f600}\"]",
        ] {
            assert!(valid(ok.as_bytes()), "{ok}");
        }
        for bad in [
            &b"\"\xc0\x80\""[..],
            b"\"\xed\xa0\x80\"",
            b"\"\xf4\x90\x80\x80\"",
            b"\"\xe2\x82\"",
            b"\"\x80\"",
            b"{\"\xff\":1}",
            b"[1,\xc3\xa9]",
        ] {
            assert!(
                matches!(parse_err(bad), Some(JsonError::Utf8 { .. })) || bad == b"[1,\xc3\xa9]",
                "{bad:?}"
            );
            assert!(!valid(bad), "{bad:?}");
        }
    }

    /// Differential: on mutated lines, the walk agrees with serde_json
    /// wherever serde_json's known departures from RFC 8259 (big numbers,
    /// lone surrogates, depth) cannot arise, and never panics anywhere.
    #[test]
    fn agrees_with_serde_json_on_mutated_lines() {
        let seeds: [&[u8]; 4] = [
            br#"{"type":"hit","aoi":{"seq":1,"run":"R"},"a":[1,2.5,-3,true,false,null],"s":"x\"y\\z"}"#,
            b"{\"type\":\"aoi:summary\",\"ok\":true,\"o\":{\"k\":{\"k\":[{}]}},\"t\":\"caf\xc3\xa9\"}",
            br#" [ "a" , { "b" : 0 } ] "#,
            br#"{"a":"\n\t\/","b":[],"c":{}}"#,
        ];
        let alphabet = b"{}[]\":,0123456789-.tfnrue \\\x00\x1f\xc3\xa9\xff";
        let mut p = Parser::new();
        let mut arena = Arena::default();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rand = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as usize
        };
        let mut compared = 0;
        for round in 0..1_000_000 {
            let mut line = seeds[round % seeds.len()].to_vec();
            for _ in 0..1 + rand() % 3 {
                let at = rand() % (line.len() + 1);
                let byte = alphabet[rand() % alphabet.len()];
                match rand() % 3 {
                    0 if at < line.len() => line[at] = byte,
                    1 if at < line.len() => {
                        line.remove(at);
                    }
                    _ => line.insert(at, byte),
                }
            }
            let ours = p.parse(&line, &mut arena).is_ok();
            arena.clear();
            let exponent = line
                .windows(2)
                .any(|w| (w[0].is_ascii_digit() || w[0] == b'.') && matches!(w[1], b'e' | b'E'));
            let plain = !line.windows(2).any(|w| w == b"\\u") && !exponent;
            if plain && let Ok(text) = std::str::from_utf8(&line) {
                let theirs = serde_json::from_str::<serde_json::Value>(text).is_ok();
                assert_eq!(ours, theirs, "{text:?}");
                compared += 1;
            } else if std::str::from_utf8(&line).is_err() {
                assert!(!ours, "invalid UTF-8 accepted: {line:?}");
            }
        }
        assert!(compared > 750_000, "{compared}");
    }

    #[test]
    fn a_failed_parse_leaves_no_members_behind() {
        let mut p = Parser::new();
        let mut arena = Arena::default();
        assert!(
            p.parse(br#"{"type":"a","aoi":{"seq":1}}"#, &mut arena)
                .is_ok()
        );
        let (top, aoi) = (arena.top.len(), arena.aoi.len());
        for bad in [
            &b"{\"x\":\"\xff\"}"[..],
            b"{\"a\":1,oops",
            b"",
            b"{\"aoi\":{\"seq\":1,}",
        ] {
            assert!(p.parse(bad, &mut arena).is_err());
            assert_eq!((arena.top.len(), arena.aoi.len()), (top, aoi));
        }
    }

    #[test]
    fn uints() {
        let v = |s: &'static [u8]| {
            Value {
                raw: s,
                start: 0,
                plain: false,
            }
            .as_uint()
        };
        assert_eq!(v(b"0"), Uint::Int(0));
        assert_eq!(v(b"99999999999999999999999"), Uint::Huge);
        assert_eq!(v(b"18446744073709551615"), Uint::Int(u64::MAX));
        assert_eq!(v(b"18446744073709551616"), Uint::Huge);
        for not in [&b"1.0"[..], b"1e0", b"-1", b"\"1\"", b"null"] {
            assert_eq!(v(not), Uint::NotUint);
        }
    }

    #[test]
    fn unescape_pairs_and_lone_surrogates() {
        assert_eq!(unescape(br"a\n\u00e9\ud83d\ude00"), "a\n\u{e9}\u{1f600}");
        assert_eq!(unescape(br"\ud800x"), "\u{fffd}x");
    }

    #[test]
    fn children_of_objects_and_arrays() {
        let v = Value {
            raw: br#"{"a":1,"b":[2,3]}"#,
            start: 0,
            plain: false,
        };
        let kids: Vec<_> = v.children().collect();
        assert_eq!(kids.len(), 2);
        assert_eq!(kids[1].1.children().count(), 2);
        assert_eq!(v.field("a").unwrap().uint(), Some(1));
        let v = Value {
            raw: br#"{ "a" : "x" , "b\u0063" : [ 1 , { "d" : [ ] } ] , "e" : null }"#,
            start: 0,
            plain: false,
        };
        let kids: Vec<_> = v
            .children()
            .map(|(k, v)| (k.into_owned(), v.raw()))
            .collect();
        assert_eq!(
            kids,
            vec![
                ("a".to_string(), &br#""x""#[..]),
                ("bc".to_string(), br#"[ 1 , { "d" : [ ] } ]"#),
                ("e".to_string(), b"null"),
            ]
        );
    }
}
