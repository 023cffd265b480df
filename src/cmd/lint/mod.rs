//! `aoitap lint -- CMD [ARG ...]` (DESIGN §15): work in progress.

pub mod sandbox;
