//! Which contract a run follows (docs/contract.md §9), and how `--protocol auto`
//! tells them apart at a run's first JSON object. The rules of each are
//! one module of `protocols/`; line rules (`line.*`, `json.*`) are decided
//! before any protocol is asked, so they hold in every one.

use crate::json::Event;

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
}

impl Protocol {
    pub const ALL: [Protocol; 6] = [
        Protocol::Aoi,
        Protocol::Aoi02,
        Protocol::Afdata,
        Protocol::Ndjson,
        Protocol::Aiocs,
        Protocol::Okf,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Protocol::Aoi => "aoi",
            Protocol::Aoi02 => "aoi-0.2",
            Protocol::Afdata => "afdata",
            Protocol::Ndjson => "ndjson",
            Protocol::Aiocs => "aiocs",
            Protocol::Okf => "okf",
        }
    }

    pub fn from_name(name: &str) -> Option<Protocol> {
        Protocol::ALL.into_iter().find(|p| p.name() == name)
    }

    /// What a run's first JSON object says it is (docs/contract.md §9, `auto`): an
    /// `aoi:meta` of major version 0 is AOI 0.2; a string `kind` among
    /// AFDATA's four with a member of that name is AFDATA; a boolean `ok`
    /// and a string `command`, with no `type` or `kind`, is the aiocs
    /// envelope; anything else is AOI 1.x.
    pub fn detect(ev: &Event<'_>) -> Protocol {
        if ev.ty().as_deref() == Some("aoi:meta")
            && ev
                .get("aoi_version")
                .and_then(|v| v.as_str())
                .and_then(|v| major(&v))
                == Some(0)
        {
            return Protocol::Aoi02;
        }
        if let Some(kind) = ev.get("kind").and_then(|v| v.as_str())
            && matches!(&*kind, "result" | "error" | "progress" | "log")
            && ev.get(&kind).is_some()
        {
            return Protocol::Afdata;
        }
        if ev.get("ok").and_then(|v| v.as_bool()).is_some()
            && ev.get("command").and_then(|v| v.as_str()).is_some()
            && ev.get("type").is_none()
            && ev.get("kind").is_none()
        {
            return Protocol::Aiocs;
        }
        Protocol::Aoi
    }

    /// Runs of this protocol have no id of their own: each is known by the
    /// line that opened it.
    pub fn runs_by_position(self) -> bool {
        matches!(
            self,
            Protocol::Afdata | Protocol::Ndjson | Protocol::Aiocs | Protocol::Okf
        )
    }
}

/// The major number of `1.0-alpha`, `2.1.0`, `0.2`.
pub fn major(version: &str) -> Option<u64> {
    let end = version
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(version.len());
    version[..end].parse().ok()
}
