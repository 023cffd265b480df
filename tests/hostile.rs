//! Bad input is the normal case: every command meets binary noise, cut and
//! nested lines and invalid UTF-8 with findings and an exit status, never a
//! panic (the harness fails on one).

use crate::util::*;

/// Deterministic noise: good lines, cut lines, random bytes, deep nesting,
/// invalid UTF-8 right after framework events.
fn hostile() -> Vec<u8> {
    let mut out = vec![];
    let mut n = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        n ^= n << 13;
        n ^= n >> 7;
        n ^= n << 17;
        n
    };
    for (i, line) in good(300).iter().enumerate() {
        match next() % 10 {
            0 => out.extend_from_slice(&line.as_bytes()[..(next() as usize) % line.len()]),
            1 => out.extend(
                (0..60)
                    .map(|_| (next() & 0xff) as u8)
                    .filter(|b| *b != b'\n'),
            ),
            2 => out.extend(std::iter::repeat_n(b'[', 20_000)),
            3 => {
                out.extend_from_slice(line.as_bytes());
                out.extend_from_slice(b"\n{\"type\":\"hit\",\"x\":\"\xc3\x28\"}");
            }
            _ => out.extend_from_slice(line.as_bytes()),
        }
        if i % 97 != 96 {
            out.push(b'\n');
        }
    }
    out
}

#[test]
fn every_command_survives_hostile_input() {
    let input = hostile();
    let dir = tempfile::tempdir().unwrap();
    let split = dir.path().join("split");
    let cases: Vec<Vec<&str>> = vec![
        vec!["verify"],
        vec!["verify", "--multi-run", "--output", "jsonl"],
        vec!["verify", "--relay"],
        vec!["strip-envelope", "--keep-framework"],
        vec!["split-by-run", "--dir", split.to_str().unwrap()],
        vec!["summarize", "--output", "json"],
        vec!["summarize", "--type-field", "x"],
        vec!["reconcile", "--output", "jsonl"],
    ];
    for args in cases {
        let out = run(&args, &input);
        assert_eq!(out.code, 65, "{args:?}: {}", out.stderr);
    }
    // Random bytes with hardly a newline.
    let noise: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    for cmd in ["verify", "summarize", "reconcile", "strip-envelope"] {
        assert_eq!(run(&[cmd], &noise).code, 65, "{cmd}");
    }
}
