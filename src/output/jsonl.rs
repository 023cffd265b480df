//! aoitap's own events (DESIGN §5) as typed wire structs, fields in the
//! order `aoitap schema` documents them; `tests/conform.rs` holds every
//! event a command writes to that schema. Strings from the input are
//! escaped by serde_json, never spliced.

use serde::Serialize;

use super::identity::{AOI_VERSION, SCHEMA_NAME, SCHEMA_VERSION, TOOL, TOOL_VERSION};

/// One line of aoitap's stream: the type, the envelope (spec §8.1),
/// `file` on events about an input, then the event's own fields.
#[derive(Serialize)]
pub struct Line<'a, T> {
    #[serde(rename = "type")]
    pub ty: &'a str,
    pub aoi: Envelope<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<&'a str>,
    #[serde(flatten)]
    pub body: T,
}

#[derive(Serialize)]
pub struct Envelope<'a> {
    pub seq: u64,
    pub run: &'a str,
}

/// The identity aoitap gives at both ends of its stream (spec §5).
#[derive(Serialize)]
pub struct Identity {
    tool: &'static str,
    tool_version: &'static str,
    aoi_version: &'static str,
    schema_name: &'static str,
    schema_version: &'static str,
}

pub const IDENTITY: Identity = Identity {
    tool: TOOL,
    tool_version: TOOL_VERSION,
    aoi_version: AOI_VERSION,
    schema_name: SCHEMA_NAME,
    schema_version: SCHEMA_VERSION,
};

#[derive(Serialize)]
pub struct Meta<'a> {
    #[serde(flatten)]
    pub identity: Identity,
    pub command: &'a str,
}

/// `aoi:warning` (spec §8.3), about aoitap itself: something it goes on
/// despite.
#[derive(Serialize)]
pub struct Warning<'a> {
    pub category: &'a str,
    pub code: &'a str,
    pub message: &'a str,
}

/// `aoi:error` (spec §9), about aoitap itself: always `scope:"process"`.
#[derive(Serialize)]
pub struct Error<'a> {
    pub category: &'a str,
    pub code: &'a str,
    pub message: &'a str,
    pub retryable: bool,
    pub scope: &'static str,
}

/// `aoi:summary` (spec §8.3, §13.1).
#[derive(Serialize)]
pub struct Summary<'a> {
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'a str>,
    pub event_count: u64,
    pub count: u64,
    pub input_count: u64,
    pub warning_count: u64,
    pub error_count: u64,
    pub partial: bool,
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caused_by: Option<CausedBy<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream: Option<Upstream<'a>>,
    pub properties: Properties,
    #[serde(flatten)]
    pub identity: Identity,
}

#[derive(Serialize)]
pub struct CausedBy<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'a str>,
    pub retryable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
}

#[derive(Serialize)]
pub struct Upstream<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_version: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_version: Option<&'a str>,
}

#[derive(Serialize)]
pub struct Properties {
    pub error_findings: u64,
    pub warning_findings: u64,
    pub info_findings: u64,
    pub findings_not_shown: u64,
}

/// `finding`: one rule broken at one place.
#[derive(Serialize)]
pub struct Finding<'a> {
    pub rule: &'a str,
    pub severity: &'a str,
    pub file: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_number: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing_from: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing_to: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_path: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keyword: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_path: Option<&'a str>,
    pub message: &'a str,
}

/// `open_run`: a run still open when reading stopped (a signal, a time
/// limit): named, never judged, so never a pass (DESIGN §17).
#[derive(Serialize)]
pub struct OpenRun<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<&'a str>,
    pub first_line: u64,
    pub lines: u64,
    pub message: &'a str,
}

/// `run`: a run's verdict.
#[derive(Serialize)]
pub struct Run<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<&'a str>,
    pub first_line: u64,
    pub lines: u64,
    pub protocol: &'a str,
    pub verdict: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    pub message: &'a str,
}

/// `attempt`: how one attempt of `run`'s command ended (DESIGN §12).
#[derive(Serialize)]
pub struct Attempt<'a> {
    pub command: &'a str,
    pub attempt: u32,
    pub attempts: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<&'a str>,
    pub timed_out: bool,
    pub cancelled: bool,
    pub elapsed_ms: u64,
    pub exit: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_in_ms: Option<u64>,
    pub message: &'a str,
}

/// `aoi:check` (spec §8.3): one lint check's result (DESIGN §15).
#[derive(Serialize)]
pub struct Check<'a> {
    pub name: &'a str,
    pub ok: bool,
    pub severity: &'static str,
    pub detail: &'a str,
    pub properties: CheckProperties<'a>,
}

#[derive(Serialize)]
pub struct CheckProperties<'a> {
    /// The check's number in spec §18.2.
    pub check: u8,
    pub factor: &'a str,
    pub result: &'a str,
    /// The command of CMD the check was made on (spec §18.1: per factor
    /// and per command).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<&'a str>,
}
