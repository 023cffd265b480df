//! Discovery (spec §3, §10, §17): the JSON Schema of aoitap's own events
//! and its capability manifest. Both are built here from the same lists the
//! code emits from (rule ids, verdicts, categories), need no input, no
//! network and no config, and are the contract the golden tests hold real
//! output to. The schema is closed where docs/contract.md §5.1 fixes a shape: an event
//! with a field it does not declare fails validation.

use serde_json::{Value, json};

use crate::check::rules::{CATEGORIES, Rule};
use crate::output::identity::{AOI_VERSION, SCHEMA_NAME, SCHEMA_VERSION, TOOL, TOOL_VERSION};

/// Never a file URI (§10.2); advisory only, never the identity (§5).
pub fn schema_id() -> String {
    format!("https://aoitap.dev/schemas/{SCHEMA_NAME}/{SCHEMA_VERSION}/schema.json")
}

/// Event types aoitap emits, by command.
const VERIFY_EVENTS: &[&str] = &[
    "aoi:meta",
    "finding",
    "run",
    "open_run",
    "aoi:error",
    "aoi:summary",
];
const RUN_EVENTS: &[&str] = &[
    "aoi:meta",
    "finding",
    "run",
    "open_run",
    "attempt",
    "aoi:error",
    "aoi:summary",
];
const SUMMARIZE_EVENTS: &[&str] = &[
    "aoi:meta",
    "run_summary",
    "open_run",
    "aoi:error",
    "aoi:summary",
];
/// The types of aoitap's own report events, which the schema holds to
/// their shapes: `upgrade` never forwards an upstream event under one of
/// them (it is kept whole, as a `record`'s member).
pub const REPORT_TYPES: &[&str] = &[
    "finding",
    "run",
    "open_run",
    "gap",
    "difference",
    "run_summary",
    "attempt",
];

const LINT_EVENTS: &[&str] = &["aoi:meta", "aoi:check", "aoi:error", "aoi:summary"];
/// `upgrade`: its own meta, error and summary, what it forwards of the
/// upstream's framework events, and the upstream's domain events (`*`:
/// whatever types the upstream has).
const UPGRADE_EVENTS: &[&str] = &[
    "aoi:meta",
    "aoi:error",
    "aoi:warning",
    "aoi:check",
    "aoi:plan",
    "aoi:progress",
    "aoi:summary",
    "*",
];
const RECONCILE_EVENTS: &[&str] = &[
    "aoi:meta",
    "gap",
    "difference",
    "run",
    "open_run",
    "aoi:error",
    "aoi:summary",
];

fn count() -> Value {
    json!({"type": "integer", "minimum": 0})
}

fn text() -> Value {
    json!({"type": "string"})
}

/// A closed object: these properties, these required, nothing else.
fn closed(props: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": false,
    })
}

/// A closed event: `type` fixed, the envelope, and `props`.
fn event(ty: &str, props: Value, required: &[&str]) -> Value {
    let mut p = props;
    p["type"] = json!({"const": ty});
    p["aoi"] = json!({"$ref": "#/$defs/envelope"});
    let mut req = vec!["type", "aoi"];
    req.extend_from_slice(required);
    closed(p, &req)
}

fn identity_props() -> Value {
    json!({
        "tool": {"const": TOOL},
        "tool_version": text(),
        "aoi_version": {"const": AOI_VERSION},
        "schema_name": {"const": SCHEMA_NAME},
        "schema_version": {"const": SCHEMA_VERSION},
    })
}

/// An `aoi:*` event whose members past the envelope are the producer's.
fn open_event(ty: &str) -> Value {
    json!({
        "type": "object",
        "properties": {"type": {"const": ty}, "aoi": {"$ref": "#/$defs/envelope"}},
        "required": ["type", "aoi"],
    })
}

/// The optional members of a 1.0 error (and warning) that aoitap writes
/// only when it forwards an upstream's (spec §8.1, §9.1).
fn spec_error_members() -> Value {
    json!({
        "domain": text(),
        "target": text(),
        "item_index": count(),
        "line_number": count(),
        "field": text(),
        "wrapped": {"type": "object"},
        "hint": text(),
        "docs": text(),
        "details": {"type": "object"},
        "properties": {"type": "object"},
    })
}

fn merge(mut a: Value, b: Value) -> Value {
    if let (Some(a), Value::Object(b)) = (a.as_object_mut(), b) {
        a.extend(b);
    }
    a
}

fn problem() -> Value {
    closed(
        json!({
            "category": text(),
            "code": text(),
            "count": count(),
            "first_message": text(),
            "first_line": count(),
        }),
        &["category", "code", "count", "first_message", "first_line"],
    )
}

/// The fields of one summarized run (a `run_summary` without envelope).
fn run_summary_props() -> Value {
    json!({
        "file": text(),
        "run": text(),
        "first_line": count(),
        "tool": text(),
        "tool_version": text(),
        "command": text(),
        "schema_name": text(),
        "schema_version": text(),
        "aoi_version": text(),
        "lines": count(),
        "bytes": count(),
        "domain_types": {"type": "object", "additionalProperties": count()},
        "framework_types": {"type": "object", "additionalProperties": count()},
        "warnings": {"type": "array", "items": problem()},
        "errors": {"type": "array", "items": problem()},
        "outcome": closed(json!({
            "ok": {"type": "boolean"},
            "reason": text(),
            "partial": {"type": "boolean"},
            "truncated": {"type": "boolean"},
            "next_cursor": {"type": "boolean"},
            "elapsed_ms": count(),
        }), &["next_cursor"]),
        "seq": closed(json!({
            "numbered": {"type": "boolean"},
            "complete": {"type": "boolean"},
            "missing": count(),
            "repeats": count(),
        }), &["numbered", "complete", "missing", "repeats"]),
        "protocol": protocol(),
        "verdict": {"$ref": "#/$defs/verdict"},
        "message": text(),
    })
}

/// The protocols a run can be judged by (docs/contract.md §6.1).
fn protocol() -> Value {
    // A profile read from a file names itself: its name is only held to
    // a profile name's shape (docs/contract.md §6.3).
    json!({"anyOf": [
        {"enum": crate::check::protocol_names()},
        {"type": "string", "pattern": "^[a-z0-9-]+$"},
    ]})
}

const RUN_SUMMARY_REQUIRED: &[&str] = &[
    "file",
    "first_line",
    "lines",
    "bytes",
    "domain_types",
    "framework_types",
    "warnings",
    "errors",
    "seq",
    "verdict",
    "message",
];

/// The JSON Schema 2020-12 of aoitap's event schema, `type` as the
/// discriminator (§10.4: `if`/`then` per type, so a failure names the type).
pub fn schema() -> Value {
    let defs = merge(spec_defs(), report_defs());
    let types: Vec<&str> = [
        "aoi:meta",
        "aoi:summary",
        "aoi:error",
        "aoi:warning",
        "aoi:check",
        "aoi:plan",
        "aoi:progress",
    ]
    .into_iter()
    .chain(REPORT_TYPES.iter().copied())
    .collect();
    let branches: Vec<Value> = types
        .iter()
        .map(|t| {
            json!({
                "if": {"properties": {"type": {"const": t}}, "required": ["type"]},
                "then": {"$ref": format!("#/$defs/{t}")},
            })
        })
        .collect();
    // Any other type is an upstream's domain event, forwarded by upgrade.
    let mut branches = branches;
    branches.push(json!({
        "if": {"not": {"properties": {"type": {"enum": types}}}},
        "then": {"$ref": "#/$defs/forwarded"},
    }));
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": schema_id(),
        "title": format!("{SCHEMA_NAME} {SCHEMA_VERSION}: the events of aoitap --output jsonl"),
        "description": "One event per line. `type` is the discriminator; aoi:* events carry only spec-defined fields, tool additions go in `properties` (AOI-CLI §8.1).",
        "type": "object",
        "required": ["type", "aoi"],
        "properties": {"type": {"type": "string"}},
        "allOf": branches,
        "$defs": defs,
    })
}

/// The `$defs` of the spec's events as aoitap writes them (its own meta,
/// summary, error, warning and lint's checks; what `upgrade` forwards),
/// and the envelope and verdict every event shares.
fn spec_defs() -> Value {
    json!({
        "envelope": closed(json!({"seq": count(), "run": text()}), &["seq", "run"]),
        "verdict": {"enum": ["pass", "failed", "retryable", "nonconforming"]},
        "aoi:meta": event("aoi:meta", merge(identity_props(), json!({
            "command": text(),
            "properties": {"type": "object"},
        })), &["tool", "tool_version", "aoi_version", "schema_name", "schema_version", "command"]),
        "aoi:summary": summary_def(),
        "aoi:error": merge(event("aoi:error", merge(json!({
            "category": {"enum": CATEGORIES},
            "code": {"type": "string", "pattern": "^[A-Z][A-Z0-9_]*$"},
            "message": {"type": "string", "pattern": "^[^\\n\\r\\u001b]*$"},
            "retryable": {"type": "boolean"},
            "retry_after_ms": count(),
            "scope": {"enum": ["process", "item"]},
            "origin": text(),
        }), spec_error_members()), &["category", "code", "message", "retryable"]),
        json!({"if": {"properties": {"retryable": {"const": false}}}, "then": {"not": {"required": ["retry_after_ms"]}}})),
        "aoi:warning": event("aoi:warning", merge(json!({
            "category": {"enum": CATEGORIES},
            "code": {"type": "string", "pattern": "^[A-Z][A-Z0-9_]*$"},
            "message": text(),
            "origin": text(),
        }), spec_error_members()), &["code", "message"]),
        // Forwarded by `upgrade` as the upstream wrote them: the spec
        // fixes no members of their own (§8.3).
        "aoi:plan": open_event("aoi:plan"),
        "aoi:progress": open_event("aoi:progress"),
        "forwarded": {
            "description": "upgrade: an upstream domain event under aoitap's envelope, its other members as the upstream wrote them",
            "type": "object",
            "properties": {
                "type": {"type": "string", "not": {"pattern": "^aoi:"}},
                "aoi": {"$ref": "#/$defs/envelope"},
            },
            "required": ["type", "aoi"],
        },
        // lint's checks (their names are `lint_checks::CHECKS`' ids, their
        // properties check, factor, result and command), and an
        // upstream's, which `upgrade` forwards: the spec's shape (§8.3).
        "aoi:check": event("aoi:check", json!({
            "name": text(),
            "ok": {"type": "boolean"},
            "severity": {"enum": ["error", "warning", "info"]},
            "detail": text(),
            "properties": {"type": "object"},
        }), &["name", "ok"]),
    })
}

/// aoitap's `aoi:summary`: the identity, the counts, and `reason`
/// whenever `ok` is false.
fn summary_def() -> Value {
    let props = json!({
        "ok": {"type": "boolean"},
        "reason": {"enum": ["failed", "cancelled", "timeout", "denied", "skipped"]},
        "event_count": count(),
        "count": count(),
        "input_count": count(),
        "warning_count": count(),
        "error_count": count(),
        "partial": {"type": "boolean"},
        "truncated": {"type": "boolean"},
        "caused_by": closed(json!({
            "origin": text(),
            "category": text(),
            "code": text(),
            "retryable": {"type": "boolean"},
            "retry_after_ms": count(),
        }), &["retryable"]),
        "upstream": closed(json!({
            "tool": text(),
            "tool_version": text(),
            "schema_name": text(),
            "schema_version": text(),
        }), &[]),
        "properties": closed(json!({
            "error_findings": count(),
            "warning_findings": count(),
            "info_findings": count(),
            "findings_not_shown": count(),
        }), &[]),
    });
    let required = [
        "ok",
        "event_count",
        "count",
        "warning_count",
        "error_count",
        "tool",
        "tool_version",
        "aoi_version",
        "schema_name",
        "schema_version",
    ];
    let summary = event("aoi:summary", merge(identity_props(), props), &required);
    let reason =
        json!({"if": {"properties": {"ok": {"const": false}}}, "then": {"required": ["reason"]}});
    merge(summary, reason)
}

/// The `$defs` of aoitap's report events (`REPORT_TYPES`), and of the
/// document `summarize --output json` writes.
fn report_defs() -> Value {
    let rule_ids: Vec<&str> = Rule::ALL.iter().map(|r| r.id()).collect();
    json!({
        "finding": event("finding", json!({
            "rule": {"enum": rule_ids},
            "severity": {"enum": ["error", "warning", "info"]},
            "file": text(),
            "line_number": {"type": "integer", "minimum": 1},
            "run": text(),
            "seq": count(),
            "column": {"type": "integer", "minimum": 1},
            "missing_from": count(),
            "missing_to": count(),
            "missing_count": count(),
            "instance_path": text(),
            "keyword": text(),
            "schema_path": text(),
            "message": text(),
        }), &["rule", "severity", "file", "message"]),
        "run": run_def(),
        "open_run": event("open_run", json!({
            "file": text(),
            "run": text(),
            "first_line": count(),
            "lines": count(),
            "message": text(),
        }), &["file", "first_line", "lines", "message"]),
        "gap": event("gap", json!({
            "file": text(),
            "run": text(),
            "from_seq": count(),
            "to_seq": count(),
            "missing_count": {"type": "integer", "minimum": 1},
            "after_line_number": count(),
            "marker_claims": count(),
        }), &["file", "from_seq", "to_seq", "missing_count", "after_line_number"]),
        "difference": event("difference", json!({
            "file": text(),
            "kind": {"enum": ["missing", "extra", "altered"]},
            "run": text(),
            "from_seq": count(),
            "to_seq": count(),
            "count": {"type": "integer", "minimum": 1},
            "line_number": {"type": "integer", "minimum": 1},
        }), &["file", "kind", "run", "from_seq", "to_seq", "count"]),
        "run_summary": event("run_summary", run_summary_props(), RUN_SUMMARY_REQUIRED),
        "attempt": event("attempt", json!({
            "file": text(),
            "command": text(),
            "attempt": {"type": "integer", "minimum": 1},
            "attempts": {"type": "integer", "minimum": 1},
            "exit_status": {"type": "integer"},
            "signal": text(),
            "timed_out": {"type": "boolean"},
            "cancelled": {"type": "boolean"},
            "elapsed_ms": count(),
            "exit": {"type": "integer", "minimum": 0, "maximum": 255},
            "retry_in_ms": count(),
            "message": text(),
        }), &["file", "command", "attempt", "attempts", "timed_out", "cancelled", "elapsed_ms", "exit", "message"]),
        "summarize_document": closed(json!({
            "tool": {"const": TOOL},
            "tool_version": text(),
            "schema_name": {"const": SCHEMA_NAME},
            "schema_version": {"const": SCHEMA_VERSION},
            "runs": {"type": "array", "items": closed(run_summary_props(), RUN_SUMMARY_REQUIRED)},
        }), &["tool", "tool_version", "schema_name", "schema_version", "runs"]),
    })
}

/// A judged run: where it is, its verdict and why, and what its seq and
/// counts said.
fn run_def() -> Value {
    let props = json!({
        "file": text(),
        "run": text(),
        "path": text(),
        "first_line": count(),
        "lines": count(),
        "tool": text(),
        "command": text(),
        "protocol": protocol(),
        "verdict": {"$ref": "#/$defs/verdict"},
        "retry_after_ms": count(),
        "message": text(),
        "present": {"type": "array", "items": {
            "type": "array", "prefixItems": [count(), count()], "minItems": 2, "maxItems": 2}},
        "missing_count": count(),
        "gaps_not_listed": count(),
        "repeats": count(),
        "reorders": count(),
        "text_lines": count(),
        "seen_domain": count(),
        "seen_warnings": count(),
        "seen_errors": count(),
        "event_count": count(),
        "count": count(),
        "warning_count": count(),
        "error_count": count(),
        "marker_notes": {"type": "array", "items": text()},
    });
    event("run", props, &["file", "first_line", "lines", "verdict"])
}

/// The protocols `command` reads: OKF's error envelope is a command's
/// stderr, which only `run` sees (docs/contract.md §6.2).
fn input_protocols(command: &str) -> Vec<&'static str> {
    crate::check::protocols_named_for(command)
}

/// The built-in producer profiles `--profile` names (docs/contract.md
/// §6.3), with where each was read from.
fn input_profiles() -> Value {
    let each = crate::check::profiles::builtins().iter().map(|p| {
        let (p, s) = (p.get(), &p.get().source);
        json!({"name": p.name, "writer": p.about, "source": {
            "package": s.package, "version": s.version, "file": s.file}})
    });
    Value::Array(each.collect())
}

/// How a stream command reads: a directory stands for its stream files,
/// and `--follow` reads files by name as they grow (docs/contract.md §2.2, §2.3).
fn input_modes(command: &str) -> Vec<&'static str> {
    let mut modes = vec!["stdin", "files", "directories"];
    if matches!(
        command,
        "verify" | "summarize" | "reconcile" | "split-by-run"
    ) {
        modes.push("follow");
    }
    modes
}

pub fn capabilities() -> Value {
    let stream = |name: &str, events: &[&str], read_only: bool, outputs: &[&str]| {
        json!({
            "name": name,
            "read_only": read_only,
            "destructive": false,
            "bounded": true,
            "supports_limit": true,
            "supports_cursor": false,
            "supports_dry_run": false,
            "input_modes": input_modes(name),
            "input_format": "jsonl",
            "input_protocols": input_protocols(name),
            "input_profiles": input_profiles(),
            "malformed_input": "per-line tolerant: each malformed line is a finding and reading goes on",
            "outputs": outputs,
            "event_types": events,
        })
    };
    let mut run_command = stream(
        "run",
        RUN_EVENTS,
        false,
        &["human", "jsonl", "tap", "junit", "github"],
    );
    run_command["input_modes"] = json!(["command"]);
    run_command["bounded"] = json!(false);
    let filter = stream("filter", VERIFY_EVENTS, true, &["human", "jsonl"]);
    // Its stdout is always an AOI 1.0 stream; `outputs` are its report's.
    // It reads one stream (stdin or one FILE), and --limit bounds its
    // findings, never the stream it writes.
    let mut upgrade = stream("upgrade", UPGRADE_EVENTS, true, &["human", "jsonl"]);
    upgrade["input_modes"] = json!(["stdin", "files"]);
    upgrade["supports_limit"] = json!(false);
    json!({
        "tool": TOOL,
        "tool_version": TOOL_VERSION,
        "aoi_versions": [AOI_VERSION],
        "outputs": ["human", "jsonl", "json", "tap", "junit", "sarif", "github", "html"],
        "schemas": [{"name": SCHEMA_NAME, "versions": [SCHEMA_VERSION], "default": SCHEMA_VERSION}],
        "auth": "none",
        "network": false,
        "commands": [
            stream("verify", VERIFY_EVENTS, true, &["human", "jsonl", "tap", "junit", "sarif", "github"]),
            run_command,
            stream("strip-envelope", VERIFY_EVENTS, true, &["human", "jsonl"]),
            upgrade,
            stream("split-by-run", VERIFY_EVENTS, false, &["human", "jsonl"]),
            stream("summarize", SUMMARIZE_EVENTS, true, &["human", "jsonl", "json", "html"]),
            stream("reconcile", RECONCILE_EVENTS, true, &["human", "jsonl", "html"]),
            filter,
            {"name": "lint", "read_only": true, "bounded": true, "input_modes": ["command"],
             "supports_limit": false, "supports_dry_run": false, "destructive": false,
             "outputs": ["human", "jsonl", "tap", "junit"], "event_types": LINT_EVENTS},
            {"name": "profiles", "read_only": true, "bounded": true, "outputs": ["text", "toml"]},
            {"name": "schema", "read_only": true, "bounded": true, "outputs": ["json"]},
            {"name": "capabilities", "read_only": true, "bounded": true, "outputs": ["json"]},
            {"name": "completions", "read_only": true, "bounded": true, "outputs": ["text"]},
            {"name": "man", "read_only": true, "bounded": true, "outputs": ["roff"]},
        ],
    })
}
