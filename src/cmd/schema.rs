//! `aoitap schema`: the JSON Schema of aoitap's events (spec §3, §10).

use std::io::{self, Write};

use crate::config::SchemaOptions;
use crate::exit::{Error, Exit, Result};
use crate::output::SCHEMA_NAME;
use crate::output::discover;

pub fn run(opts: &SchemaOptions) -> Result<Exit> {
    if let Some(n) = &opts.name
        && n != SCHEMA_NAME
    {
        return Err(Error::Usage(format!(
            "no schema named {n:?}; aoitap has one: {SCHEMA_NAME}"
        )));
    }
    if let Some(m) = opts.major
        && Some(m) != crate::check::major(crate::output::SCHEMA_VERSION)
    {
        return Err(Error::Usage(format!(
            "schema version {m} is not served; aoitap serves {}",
            crate::output::SCHEMA_VERSION
        )));
    }
    print_json(&discover::schema())
}

/// One JSON document on stdout, indented for people, one object for tools.
pub fn print_json(v: &serde_json::Value) -> Result<Exit> {
    let mut text = serde_json::to_vec_pretty(v).map_err(std::io::Error::other)?;
    text.push(b'\n');
    let mut out = io::stdout().lock();
    out.write_all(&text)?;
    out.flush()?;
    Ok(Exit::Pass)
}
