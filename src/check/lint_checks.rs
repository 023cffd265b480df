//! The checks `aoitap lint` makes (spec §18.2, docs/contract.md §1.4): a stable id
//! each, the §18.2 number and factor, what it needs, and what it cannot
//! prove. The catalogue is shown in `lint --help` and the man page, and
//! `--checks` / `--exclude-checks` name checks by id.

/// One check of the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Check {
    pub id: &'static str,
    /// Its number in spec §18.2.
    pub number: u8,
    pub factor: &'static str,
    /// What it does, in one line.
    pub does: &'static str,
    /// What it needs beyond the invocation, if anything.
    pub needs: &'static str,
    /// What passing it does not prove.
    pub cannot: &'static str,
}

pub const CHECKS: &[Check] = &[
    Check {
        id: "lint.01-discoverable",
        number: 1,
        factor: "Discoverable",
        does: "`schema --output json` succeeds with no credentials, an empty HOME and no network, and is a JSON Schema that compiles; `capabilities --output json` is one JSON object",
        needs: "",
        cannot: "that the schema describes every event the tool emits",
    },
    Check {
        id: "lint.02-stdout-jsonl",
        number: 2,
        factor: "Typed",
        does: "stdout is only JSON objects, one per line, each with a string type, and no ANSI or control bytes, also with TERM and FORCE_COLOR set and with stdout a terminal (a pty)",
        needs: "",
        cannot: "the output of commands not run",
    },
    Check {
        id: "lint.03-exit-matches-summary",
        number: 3,
        factor: "Verifiable",
        does: "exit 0 exactly when the stream ends in an aoi:summary with ok:true; a stream without a summary fails",
        needs: "",
        cannot: "the exit of failures the invocation does not provoke",
    },
    Check {
        id: "lint.04-framework-schema",
        number: 4,
        factor: "Typed, Verifiable",
        does: "every aoi:meta, aoi:summary, aoi:warning, aoi:error and aoi:check event validates against the schema the tool itself declares",
        needs: "a schema from check 1",
        cannot: "that domain events are typed as the schema says",
    },
    Check {
        id: "lint.05-usage-and-errors",
        number: 5,
        factor: "Verifiable",
        does: "an unknown flag exits non-zero; every aoi:error has category, code, message and retryable, no retry_after_ms with retryable:false, no removed category",
        needs: "",
        cannot: "errors on paths the invocations do not reach",
    },
    Check {
        id: "lint.06-safe-destructive",
        number: 6,
        factor: "Safe",
        does: "CMD ARGS without --confirm (or --yes, --force, --confirm-count) exit non-zero and leave the working directory as it was; with supports_dry_run, --dry-run exits 0 with aoi:plan events and changes nothing",
        needs: "capabilities marking the command destructive, and CMD ARGS of the confirmed command: lint runs them several times, so point them at a scratch target",
        cannot: "side effects outside the working directory's top level, or remote ones",
    },
    Check {
        id: "lint.07-idempotent",
        number: 7,
        factor: "Idempotent",
        does: "CMD ARGS --idempotency-key K twice, sharing one HOME: the replay ends with the same exit, the same ok and the same domain events (by type)",
        needs: "capabilities with supports_idempotency_key",
        cannot: "that a remote effect was not doubled",
    },
    Check {
        id: "lint.08-auditable",
        number: 8,
        factor: "Auditable",
        does: "every domain event of a mutating command names what it is about: id, a *_id or *Id field, path, url, uri or key",
        needs: "capabilities marking the command read_only: false, and CMD ARGS that make events",
        cannot: "that the ids are stable across runs",
    },
    Check {
        id: "lint.09-secrets",
        number: 9,
        factor: "Safe",
        does: "a canary value given to each secret-looking flag (from CMD ARGS --help, capabilities or --secret-flag; at most 16), as --flag=VALUE, or --flag VALUE when help shows a value, appears nowhere in stdout or stderr of a call that took it; meta.args is redacted",
        needs: "a secret-looking flag, and an unknown flag that is refused (else taking a flag cannot be told from refusing it)",
        cannot: "secrets read from files or the environment, or quoted back in a refusal",
    },
    Check {
        id: "lint.10-pipe-and-signals",
        number: 10,
        factor: "Composable",
        does: "stdout closed after the first line gives exit 0 or 141 and no stack trace; SIGINT and SIGTERM after the first line give a reason:cancelled summary",
        needs: "a run that writes more than a pipe holds (64 KiB) and lasts past its first line",
        cannot: "a signal at every moment of the run",
    },
    Check {
        id: "lint.11-limit-and-cursor",
        number: 11,
        factor: "Bounded, Streamable",
        does: "CMD ARGS --limit 1: the summary has a boolean truncated; fewer domain events than without the limit, truncated:true, and a next_cursor when the command supports_cursor",
        needs: "capabilities with supports_limit, and CMD ARGS that give more than one result",
        cannot: "limits the tool applies silently, or that the cursor resumes where the cut was",
    },
    Check {
        id: "lint.12-malformed-input",
        number: 12,
        factor: "Composable",
        does: "fed a stream with a malformed line on stdin, CMD ends non-zero with ok:false (fail-fast and per-line tolerant modes alike, spec §12.2, §19.4) and its stdout stays JSONL",
        needs: "capabilities with an input_format or input_modes of jsonl, and CMD ARGS that read stdin",
        cannot: "which of the two modes was used, or every kind of malformed line",
    },
    Check {
        id: "lint.13-schema-version",
        number: 13,
        factor: "Versioned",
        does: "schema_version is in aoi:meta and aoi:summary; --schema-version is honoured when capabilities list versions, and an unknown one refused",
        needs: "",
        cannot: "that older versions' shapes are kept",
    },
    Check {
        id: "lint.14-one-meta-one-summary",
        number: 14,
        factor: "Composable, Verifiable",
        does: "at most one aoi:meta, first, and at most one aoi:summary, last, per stream",
        needs: "",
        cannot: "streams of invocations not made",
    },
    Check {
        id: "lint.15-seq-and-count",
        number: 15,
        factor: "Verifiable",
        does: "aoi.seq, when emitted, is contiguous from 0 with aoi.run beside it and reconciles with aoi:summary.event_count; with no seq the factor is not claimed",
        needs: "",
        cannot: "cuts in streams of invocations not made",
    },
    Check {
        id: "lint.16-transformer",
        number: 16,
        factor: "Composable",
        does: "fed an upstream stream that ends in a retryable aoi:error, CMD forwards no upstream aoi:meta or aoi:summary, tags forwarded aoi:error and aoi:warning with origin, does not end ok:true (without --continue-on-error), and with ok:false carries retryable and retry_after_ms in caused_by (spec §13.1)",
        needs: "capabilities with an input_format or input_modes of jsonl, and CMD ARGS that read stdin",
        cannot: "upstreams other than the one fed",
    },
];

/// The catalogue as `lint --help` ends with it.
pub fn after_help() -> String {
    let mut out = String::from(
        "Example: aoitap lint -- tool search \"agent tools\" --output jsonl\n         \
         aoitap lint --output tap --expected-failures known.txt \\\n           \
         -- tool list --output jsonl > lint.tap\n         \
         prove -e cat lint.tap\n\n\
         Checks (id, spec §18.2 factor: what it does; needs; cannot prove):\n",
    );
    for c in CHECKS {
        out.push_str(&format!("  {}  ({})\n      {}.\n", c.id, c.factor, c.does));
        if !c.needs.is_empty() {
            out.push_str(&format!("      Needs {}.\n", c.needs));
        }
        out.push_str(&format!("      Cannot prove {}.\n", c.cannot));
    }
    out.push_str(
        "\nEach call runs with the environment cleared but PATH, a fresh empty HOME, stdin from \
         /dev/null (or a fixture, checks 12 and 16), no network where `unshare -rn` is allowed, its \
         own process group, and --timeout; nothing it starts outlives lint. CMD ARGS run several \
         times: for a command with effects, point them at a scratch target. A failed check shows \
         the last lines (10, at most 2 KiB) of the stderr of each call it failed on, and says \
         \"a stack trace on stderr\" when they hold one; lines that name something \
         secret-looking, or hold a value --env passes, are not quoted.\n\n\
         Results: pass, fail, not-claimed, inconclusive (the calls could not tell: the detail says \
         what to give), skipped (what the check needs is not advertised); with \
         --expected-failures, expected-failure (listed, and failing: reported, not counted) and \
         stale (listed, but passing: a failure). Checks are named by id, by lint.NN or by number. \
         Exit status: 0 when no check fails and checks 2, 3 and 14 (those asked for) were decided; \
         1 when a check fails, when one of those three could not be decided, or when no check \
         could be (a call past --timeout fails 3, 14 and 15); 64 on a usage error (CMD ARGS the \
         tool refuses as one included), 66 when --expected-failures is missing, 127 or 126 when \
         CMD cannot run, 130 on SIGINT, 143 on SIGTERM.",
    );
    out
}

/// The check with this id.
pub fn by_id(id: &str) -> Option<&'static Check> {
    CHECKS.iter().find(|c| c.id == id)
}

/// The check a user names: by its id, by `lint.NN`, or by its number.
pub fn by_name(name: &str) -> Option<&'static Check> {
    by_id(name).or_else(|| {
        let n: u8 = name.strip_prefix("lint.").unwrap_or(name).parse().ok()?;
        CHECKS.iter().find(|c| c.number == n)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One check per §18.2 number, in order, each id naming its number.
    #[test]
    fn the_catalogue_is_the_spec_table() {
        let numbers: Vec<u8> = CHECKS.iter().map(|c| c.number).collect();
        assert_eq!(numbers, (1..=16).collect::<Vec<u8>>());
        for c in CHECKS {
            assert!(
                c.id.starts_with(&format!("lint.{:02}-", c.number)),
                "{}",
                c.id
            );
            assert_eq!(by_id(c.id), Some(c));
            assert_eq!(by_name(&c.number.to_string()), Some(c));
            assert_eq!(by_name(&format!("lint.{:02}", c.number)), Some(c));
        }
    }
}
