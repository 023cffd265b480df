//! Who aoitap says it is in its own events (spec §5): the identity every
//! meta and summary it writes carries, and the schema of those events.

pub const TOOL: &str = "aoitap";
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");
pub const AOI_VERSION: &str = "1.0-alpha";
pub const SCHEMA_NAME: &str = "dev.aoitap.events";
pub const SCHEMA_VERSION: &str = "1.10.0";
/// Where a reader of aoitap's reports learns what it checks (SARIF's
/// `informationUri`): the AOI-CLI specification's public home, as aoitap
/// has none of its own yet.
pub const INFORMATION_URI: &str = "https://www.machinemode.io/spec";
