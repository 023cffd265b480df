//! How `--protocol auto` tells the contracts apart at a run's first JSON
//! object (docs/contract.md §6.1). Line rules (`line.*`, `json.*`) are
//! decided before any protocol is asked, so they hold in every one.

use crate::check::config::Protocol;
use crate::json::Event;

/// What a run's first JSON object says it is (docs/contract.md §6.1, `auto`): an
/// `aoi:meta` of major version 0 is AOI 0.2; a string `kind` among
/// AFDATA's four with a member of that name is AFDATA; a boolean `ok`
/// and a string `command`, with no `type` or `kind`, is the aiocs
/// envelope; an object that matches a built-in profile's signature is
/// that producer's stream (docs/contract.md §6.3); anything else is AOI
/// 1.x.
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
    if let Some(p) = crate::check::profiles::detect(ev) {
        return Protocol::Profile(p);
    }
    Protocol::Aoi
}

/// The major number of `1.0-alpha`, `2.1.0`, `0.2`.
pub fn major(version: &str) -> Option<u64> {
    let end = version
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(version.len());
    version[..end].parse().ok()
}
