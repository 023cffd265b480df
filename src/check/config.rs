//! The checker's plain configuration, made from the command line in
//! `cli`: what the rules are told beyond the lines themselves, and the
//! names of the contracts a run may follow (`--protocol`, docs/contract.md §6.1).

use std::sync::{Arc, OnceLock};

use super::profiles::{Profile, ProfileRef};
use super::rules::Levels;
use super::schema::EventSchema;

/// The checker's plain configuration (made from the command line in `cli::lower`).
#[derive(Clone, Debug, Default)]
pub struct Config {
    pub multi_run: bool,
    pub unbounded: bool,
    pub accept_partial: bool,
    pub continue_on_error: bool,
    pub expect_schema: Option<SchemaPin>,
    pub levels: Levels,
    /// `--marker` patterns, beside the built-in elision markers.
    pub markers: Vec<String>,
    /// `--max-line-bytes`, named in `line.too-long` (0: not given).
    pub max_line_bytes: usize,
    /// `--protocol` or `--profile`: `None` is `auto`, decided per run
    /// (docs/contract.md §6.1, §6.3).
    pub protocol: Option<Protocol>,
    /// The ndjson discriminator (`--type-field`).
    pub type_field: String,
    /// ndjson: the types that open and end a run (`--first`, `--last`).
    pub first: Option<String>,
    pub last: Option<String>,
    /// The profile those three make, at first use (`Config::typed`).
    pub(crate) typed: OnceLock<Arc<Profile>>,
    /// `--names afdata`: AFDATA's suffix types held in every run, not only
    /// AFDATA's (docs/contract.md §6.2).
    pub afdata_names: bool,
    /// `--secret-name`: more names whose values are secrets (exact).
    pub secret_names: Vec<String>,
    /// `--redact`: the command writes lines out redacted, so a finding
    /// about a line it withholds says so.
    pub redact: bool,
    /// `verify --schema`: the events' JSON Schema, compiled.
    pub schema: Option<Arc<EventSchema>>,
    /// Each run's time, from its first line to its verdict, as read: what
    /// a JUnit testcase's `time` says (docs/contract.md §5.3). Off for the
    /// other formats, which never read the clock per run.
    pub timed: bool,
}

impl Config {
    /// Typed NDJSON's profile, made from `--type-field`, `--first` and
    /// `--last` when a run is first judged by it (the flags are set by
    /// then): the profile engine judges typed NDJSON as it judges the
    /// agent CLIs' streams (docs/contract.md §6.3).
    pub fn typed(&self) -> &Profile {
        self.typed.get_or_init(|| {
            Arc::new(Profile::typed(
                &self.type_field,
                self.first.as_deref(),
                self.last.as_deref(),
            ))
        })
    }
}

/// `--expect-schema NAME[@MAJOR]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaPin {
    pub name: String,
    pub major: Option<u64>,
}

/// Which contract a run follows (docs/contract.md §6.1). The rules of each
/// are one module of `protocols/`, and `protocols/detect.rs` says which
/// one a run's first object reads as under `--protocol auto`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// AOI-CLI 1.x (the spec in `spec/aoi-cli-v1.0-alpha.md`).
    #[default]
    Aoi,
    /// AOI 0.2: no envelope; `aoi:summary.count` counts every line.
    Aoi02,
    /// AFDATA protocol v1: `kind` and a payload named by it.
    Afdata,
    /// Typed NDJSON: a string discriminator, nothing more unless
    /// `--first`/`--last` say how a run starts and ends. Never guessed.
    Ndjson,
    /// The aiocs one-shot `--json` envelope: one document, `ok` and
    /// `command`.
    Aiocs,
    /// An OKF command under `run`: one JSON document on stdout, and on
    /// failure the error envelope on stderr. Never guessed.
    Okf,
    /// Plain JSON lines: every object a domain event, the run ended by
    /// the input (or by `run`'s command). Never guessed.
    Jsonl,
    /// An agent CLI's own stream, judged by a producer profile
    /// (`protocols/profile/`, docs/contract.md §6.3).
    Profile(ProfileRef),
}

impl Protocol {
    pub const ALL: [Protocol; 7] = [
        Protocol::Aoi,
        Protocol::Aoi02,
        Protocol::Afdata,
        Protocol::Ndjson,
        Protocol::Aiocs,
        Protocol::Okf,
        Protocol::Jsonl,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Protocol::Aoi => "aoi",
            Protocol::Aoi02 => "aoi-0.2",
            Protocol::Afdata => "afdata",
            Protocol::Ndjson => "ndjson",
            Protocol::Aiocs => "aiocs",
            Protocol::Okf => "okf",
            Protocol::Jsonl => "jsonl",
            Protocol::Profile(p) => &p.get().name,
        }
    }

    /// The producer a profile is of (`codex`, `claude`): the tool of a
    /// run whose stream names none.
    pub fn producer(self) -> Option<&'static str> {
        match self {
            Protocol::Profile(p) => Some(p.get().tool()),
            _ => None,
        }
    }

    pub fn from_name(name: &str) -> Option<Protocol> {
        Protocol::ALL.into_iter().find(|p| p.name() == name)
    }

    /// AOI 1.x, the protocol a report leaves unsaid.
    pub fn is_default(self) -> bool {
        self == Protocol::default()
    }

    /// Runs of this protocol have no id of their own: each is known by the
    /// line that opened it.
    pub fn runs_by_position(self) -> bool {
        matches!(
            self,
            Protocol::Afdata
                | Protocol::Ndjson
                | Protocol::Aiocs
                | Protocol::Okf
                | Protocol::Jsonl
                | Protocol::Profile(_)
        )
    }
}
