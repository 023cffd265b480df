//! `aoitap schema`: the JSON Schema of aoitap's events (spec §3, §10).

use std::io::{self, Write};

use anyhow::Result;

use crate::exit::Exit;
use crate::output::SCHEMA_NAME;
use crate::output::discover;

pub fn run(name: Option<&str>, major: Option<u64>) -> Result<Exit> {
    if let Some(n) = name
        && n != SCHEMA_NAME
    {
        crate::say!("aoitap: no schema named {n:?}; aoitap has one: {SCHEMA_NAME}");
        return Ok(Exit::Usage);
    }
    if let Some(m) = major
        && Some(m) != crate::check::major(crate::output::SCHEMA_VERSION)
    {
        crate::say!(
            "aoitap: schema version {m} is not served; aoitap serves {}",
            crate::output::SCHEMA_VERSION
        );
        return Ok(Exit::Usage);
    }
    print_json(&discover::schema())
}

/// One JSON document on stdout, indented for people, one object for tools.
pub fn print_json(v: &serde_json::Value) -> Result<Exit> {
    let mut text = serde_json::to_vec_pretty(v)?;
    text.push(b'\n');
    crate::input::source::check_stdout()?;
    let mut out = io::stdout().lock();
    out.write_all(&text)?;
    out.flush()?;
    Ok(Exit::Pass)
}
