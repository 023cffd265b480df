//! Colour in human output (anstyle): the few styles aoitap paints with,
//! and when it paints at all. Machine output is never painted.

use anstyle::{AnsiColor, Style};

pub const BAD: Style = AnsiColor::Red.on_default().bold();
pub const GOOD: Style = AnsiColor::Green.on_default().bold();
pub const WARN: Style = AnsiColor::Yellow.on_default().bold();
pub const NOTE: Style = AnsiColor::Cyan.on_default().bold();

/// `--color auto`: on a terminal, unless `NO_COLOR` is set and not empty
/// (no-color.org).
pub fn auto(terminal: bool) -> bool {
    terminal && !anstyle_query::no_color()
}

/// `text` in `style` when `on`, else as it is.
pub fn paint(on: bool, style: Style, text: &str) -> String {
    if on {
        format!("{style}{text}{style:#}")
    } else {
        text.to_string()
    }
}
