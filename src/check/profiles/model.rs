//! A producer profile as data (docs/contract.md §6.3): what one agent CLI's
//! stream looks like, read from a small TOML file. The file's words are
//! checked where they are read (`serde`, with `deny_unknown_fields`), so
//! a mistake is a usage error naming its line and column, never a
//! surprise while a stream is judged.

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Deserialize;

use super::matching::{Match, Path};
use crate::check::rules::CATEGORIES;

/// Profiles read in one process, at most: the built-ins and a few files.
const MAX_KEPT: usize = 64;

static KEPT: [OnceLock<&'static Profile>; MAX_KEPT] = [const { OnceLock::new() }; MAX_KEPT];
static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A profile kept for the rest of the process, by its number: a run's
/// protocol names it and stays two bytes, as cheap to copy and compare as
/// the others' (a pointer here made every line's verdict 16 bytes
/// longer).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProfileRef(u8);

impl ProfileRef {
    /// Keep `profile` for the rest of the process.
    pub fn keep(mut profile: Profile) -> Result<ProfileRef, String> {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        if n >= MAX_KEPT {
            return Err(format!("more than {MAX_KEPT} profiles read in one process"));
        }
        profile.number = n as u8;
        KEPT[n]
            .set(Box::leak(Box::new(profile)))
            .map_err(|_| "a profile's place taken twice".to_string())?;
        Ok(ProfileRef(n as u8))
    }

    /// The profile.
    #[inline]
    pub fn get(self) -> &'static Profile {
        KEPT[usize::from(self.0)]
            .get()
            .expect("a handle is made only once its profile is kept")
    }
}

impl std::fmt::Debug for ProfileRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Profile({})", self.get().name)
    }
}

/// One producer's stream, as a profile file says it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// What `--profile` names it by, and what the verdict line says.
    pub name: String,
    /// One line for `aoitap profiles`: which command writes such a stream.
    pub about: String,
    /// The producer's name, as an upgraded stream's `upstream.tool` and
    /// `origin` say it (default: the profile's name).
    pub tool: Option<String>,
    /// Where the stream names the producer's version, if it does.
    #[serde(default)]
    pub tool_version: Vec<Path>,
    /// `lines` (one event a line) or `json` (one document, which may be
    /// pretty-printed over several lines).
    #[serde(default)]
    pub form: Form,
    /// The member that names an event's type: what summarize counts by.
    #[serde(default = "type_field")]
    pub type_field: String,
    /// One process writes several turns, each opened and ended anew.
    #[serde(default)]
    pub multi_turn: bool,
    /// `auto` picks this profile when a run's first object matches one of
    /// these (built-ins only: a file is used when named).
    #[serde(default)]
    pub signature: Vec<Match>,
    /// The events that open a run (a turn).
    pub open: Vec<Match>,
    /// In a log (`--multi-run`), an opener inside a run that has not
    /// ended begins the next run (the one before was cut). Off where an
    /// opener is any event the producer writes first (Copilot's).
    #[serde(default = "yes")]
    pub reopen: bool,
    /// The events that may come before the opener.
    #[serde(default)]
    pub before_open: Vec<Match>,
    /// The events that end a turn, each with what success looks like.
    pub end: Vec<End>,
    /// Errors that do not end the run.
    #[serde(default)]
    pub error: Vec<ErrorEvent>,
    /// The events allowed after the end.
    #[serde(default)]
    pub after_end: Vec<Match>,
    /// The member that names the run, where one does.
    pub run_id: Option<RunId>,
    /// A member on end events that counts them from 0: a skip is a lost
    /// event.
    pub ordinal: Option<Path>,
    /// How the producer's codes and texts read as the spec's categories.
    #[serde(default)]
    pub categories: Categories,
    /// Under `run`: what an exit status means when the stream has no end,
    /// as a category (`41 = "authn"`).
    #[serde(default)]
    pub exit: BTreeMap<ExitStatus, Category>,
    /// Where the profile's facts were read.
    pub source: Source,
    /// The file as it was read: what `aoitap profiles NAME` prints.
    #[serde(skip)]
    pub text: String,
    /// Its number once kept (`ProfileRef::keep`).
    #[serde(skip)]
    number: u8,
    /// Made from typed NDJSON's flags (`Profile::typed`): its findings
    /// keep the `ndjson.*` names and words they have always had.
    #[serde(skip)]
    pub from_flags: bool,
}

impl Profile {
    /// Its handle (it is kept: only kept profiles are judged by).
    pub fn handle(&self) -> ProfileRef {
        ProfileRef(self.number)
    }

    /// Typed NDJSON (`--protocol ndjson --type-field F --first T --last
    /// T`, docs/contract.md §6.1, §6.3) as a profile: any event opens a run
    /// unless `first` names its type, `last`'s type ends it as a success,
    /// and without `last` the stream has no end to wait for. One engine
    /// judges it and the agent CLIs' streams.
    pub fn typed(type_field: &str, first: Option<&str>, last: Option<&str>) -> Profile {
        let is = |ty: &str| Match::equals(Path::key(type_field), ty);
        Profile {
            name: "ndjson".into(),
            about: "typed NDJSON, its runs bounded by --first and --last".into(),
            tool: None,
            tool_version: vec![],
            form: Form::Lines,
            type_field: type_field.into(),
            multi_turn: false,
            signature: vec![],
            // An empty match holds of every event.
            open: vec![first.map_or_else(Match::default, is)],
            reopen: true,
            before_open: vec![],
            end: last
                .map(|ty| End {
                    when: is(ty),
                    success: Some(Match::default()),
                    cancelled: None,
                    code: vec![],
                    message: vec![],
                    status: vec![],
                    category: vec![],
                    retry_after_ms: vec![],
                })
                .into_iter()
                .collect(),
            error: vec![],
            after_end: vec![],
            run_id: None,
            ordinal: None,
            categories: Categories::default(),
            exit: BTreeMap::new(),
            source: Source {
                package: "aoitap".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                file: "--type-field, --first, --last".into(),
                note: None,
            },
            text: String::new(),
            number: 0,
            from_flags: true,
        }
    }

    /// The producer's name.
    pub fn tool(&self) -> &str {
        self.tool.as_deref().unwrap_or(&self.name)
    }
}

fn yes() -> bool {
    true
}

fn type_field() -> String {
    "type".to_string()
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Form {
    #[default]
    Lines,
    Json,
}

/// An event that ends a turn.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct End {
    pub when: Match,
    /// The end reads as success when this holds; without it, never.
    pub success: Option<Match>,
    /// The end reads as cancelled when this holds (and success does not).
    pub cancelled: Option<Match>,
    #[serde(default)]
    pub code: Vec<Path>,
    #[serde(default)]
    pub message: Vec<Path>,
    #[serde(default)]
    pub status: Vec<Path>,
    #[serde(default)]
    pub category: Vec<Path>,
    #[serde(default)]
    pub retry_after_ms: Vec<Path>,
}

/// Where an error's parts are: the first present of each list. An HTTP
/// `status` reads as its category by spec §9.5; a `category` is the
/// producer's own, when it writes one of the spec's.
pub struct Fields<'a> {
    pub code: &'a [Path],
    pub message: &'a [Path],
    pub status: &'a [Path],
    pub category: &'a [Path],
    pub retry_after_ms: &'a [Path],
}

macro_rules! fields {
    ($t:ty) => {
        impl $t {
            pub fn fields(&self) -> Fields<'_> {
                Fields {
                    code: &self.code,
                    message: &self.message,
                    status: &self.status,
                    category: &self.category,
                    retry_after_ms: &self.retry_after_ms,
                }
            }
        }
    };
}

fields!(End);
fields!(ErrorEvent);

/// An error event that does not end the run.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorEvent {
    pub when: Match,
    pub level: Level,
    #[serde(default)]
    pub code: Vec<Path>,
    #[serde(default)]
    pub message: Vec<Path>,
    #[serde(default)]
    pub status: Vec<Path>,
    #[serde(default)]
    pub category: Vec<Path>,
    #[serde(default)]
    pub retry_after_ms: Vec<Path>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// A failure only if no successful end follows; the best cause when
    /// the run fails.
    Provisional,
    /// Counted, never a failure.
    Warning,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunId {
    pub path: Path,
    /// Must it be the same wherever it appears?
    #[serde(default)]
    pub same: bool,
}

/// How codes and texts read as categories (spec §9.2). HTTP statuses
/// follow spec §9.5 and need no table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Categories {
    /// A code as the producer writes it, to a category.
    #[serde(default)]
    pub codes: BTreeMap<String, Category>,
    /// Message text rules: fragile (a reworded message escapes them),
    /// used only where nothing structured says more.
    #[serde(default)]
    pub fragile_messages: Vec<MessageRule>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageRule {
    /// Matched without regard to case.
    pub contains: String,
    pub category: Category,
}

/// An exit status, 0 to 255, checked where it is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ExitStatus(pub i32);

impl<'de> Deserialize<'de> for ExitStatus {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ExitStatus, D::Error> {
        let s = String::deserialize(d)?;
        match s.parse::<u8>() {
            Ok(n) => Ok(ExitStatus(i32::from(n))),
            Err(_) => Err(serde::de::Error::custom(format!(
                "exit: {s:?} is not an exit status (0-255)"
            ))),
        }
    }
}

/// One of the spec's closed categories (§9.2), checked where it is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Category(pub &'static str);

impl<'de> Deserialize<'de> for Category {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Category, D::Error> {
        Category::try_from(String::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

impl TryFrom<String> for Category {
    type Error = String;

    fn try_from(s: String) -> Result<Category, String> {
        CATEGORIES
            .iter()
            .find(|c| **c == s)
            .map(|c| Category(c))
            .ok_or_else(|| {
                format!(
                    "{s:?} is not a category of spec §9.2 (one of {})",
                    CATEGORIES.join(", ")
                )
            })
    }
}

impl Category {
    /// The category's default disposition (spec §9.2).
    pub fn retryable(&self) -> bool {
        matches!(self.0, "rate_limited" | "unavailable" | "timeout")
    }
}

/// Where a profile's facts come from, shown by `aoitap profiles NAME`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    pub package: String,
    pub version: String,
    pub file: String,
    #[serde(default)]
    pub note: Option<String>,
}
