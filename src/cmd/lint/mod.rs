//! `aoitap lint -- CMD [ARG ...]` (DESIGN §15): work in progress.

pub mod catalogue;
pub mod checks;
pub mod judged;
pub mod sandbox;
