pub mod accounts;
pub mod action;
pub mod catalogue;
pub mod classify;
pub mod db;
pub mod exit;
pub mod housekeeping;
pub mod interrupts;
pub mod policy;
pub mod profile;
pub mod recover;
pub mod routes;
pub mod run;
pub mod simulate;
pub mod time;
pub mod transcript;

use std::io::Read;
use std::path::Path;

/// The largest policy document or failure sequence file read (1 MiB): far
/// above any real one (the largest fixture is a few KiB), small enough that
/// `/dev/zero` or a log passed by mistake is refused at once.
pub const MAX_INPUT_BYTES: u64 = 1024 * 1024;

/// Parses one of a domain enum's values by its stable name, so `--help`
/// lists them and the list has one owner (the enum's `ALL` and `as_str`).
/// A wrong value is named cut short and sanitized, never echoed whole.
pub fn one_of<T: Copy + Send + Sync + 'static>(
    all: &'static [T],
    name: fn(T) -> &'static str,
) -> OneOf<T> {
    OneOf { all, name }
}

#[derive(Clone)]
pub struct OneOf<T: 'static> {
    all: &'static [T],
    name: fn(T) -> &'static str,
}

impl<T: Copy + Send + Sync + 'static> OneOf<T> {
    /// `a, b, c`.
    pub fn names(&self) -> String {
        let names: Vec<&str> = self.all.iter().map(|v| (self.name)(*v)).collect();
        names.join(", ")
    }
}

impl<T: Copy + Send + Sync + 'static> clap::builder::TypedValueParser for OneOf<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        let given = value.to_string_lossy();
        if let Some(found) = self.all.iter().find(|v| (self.name)(**v) == given) {
            return Ok(*found);
        }
        let arg = arg.map_or_else(|| "value".to_string(), |a| a.to_string());
        let arg = arg.split(' ').next().unwrap_or_default().to_string();
        let message = format!(
            "{arg} {}: expected one of {}\n",
            shown_value(&given),
            self.names()
        );
        Err(clap::Error::raw(clap::error::ErrorKind::InvalidValue, message).with_cmd(cmd))
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            self.all
                .iter()
                .map(|v| clap::builder::PossibleValue::new((self.name)(*v))),
        ))
    }
}

/// Names taken from the input are cut to this many characters in messages.
pub const MAX_SHOWN_CHARS: usize = 64;

/// A value from the input as a message shows it: sanitized, cut to
/// [`MAX_SHOWN_CHARS`], quoted.
pub fn shown_value(value: &str) -> String {
    let clean = recourse::evidence::sanitize(value);
    let cut = match clean.char_indices().nth(MAX_SHOWN_CHARS) {
        Some((at, _)) => format!("{}…", &clean[..at]),
        None => clean,
    };
    format!("{cut:?}")
}

/// Prints `value` as pretty JSON on standard output, with the control
/// characters serde leaves raw escaped (see [`recourse::controls::escape_json`]).
pub fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    println!("{}", json_text(&serde_json::to_string_pretty(value)?));
    Ok(())
}

/// JSON text as standard output shows it (see [`print_json`]).
pub fn json_text(json: &str) -> std::borrow::Cow<'_, str> {
    recourse::controls::escape_json(json)
}

/// For commands that only print: a reader that goes away (`| head`) ends
/// the command quietly, as it does any Unix tool, instead of a panic on the
/// failed write. Not for commands that run agents, whose writes to an
/// agent's stdin must see the error, not die of it.
pub fn end_quietly_on_closed_pipe() {
    // SAFETY: called first thing in `main`, before any thread exists;
    // restoring the default disposition of one signal has no other effect.
    #[allow(unsafe_code)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// `message: cause: cause…` of an error chain, leaving out a cause whose
/// text the line already holds (SQLite's message is repeated by each layer
/// that wraps it).
pub fn error_text(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let part = cause.to_string();
        if text.contains(part.as_str()) {
            continue;
        }
        // rusqlite's innermost layer is "Error code N: <the same words>".
        if let Some((code, words)) = part.split_once(": ") {
            if code.starts_with("Error code ") && text.contains(words) {
                continue;
            }
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    // Engine errors may name a time (a limit until when): the CLI's one format.
    time::readable_times(&text).into_owned()
}

/// Reads `file` as UTF-8, refusing one larger than `limit` bytes without
/// reading past it (a device like `/dev/zero` never ends).
pub fn read_bounded(file: &Path, limit: u64) -> Result<String, String> {
    let opened = std::fs::File::open(file).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    opened
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > limit {
        return Err(format!(
            "larger than {}; refusing to read it",
            human_bytes(limit)
        ));
    }
    String::from_utf8(bytes).map_err(|_| "stream did not contain valid UTF-8".to_string())
}

/// `1 MiB`, `64 KiB`, `100 bytes`.
fn human_bytes(n: u64) -> String {
    if n >= 1024 * 1024 && n % (1024 * 1024) == 0 {
        format!("{} MiB", n / (1024 * 1024))
    } else if n >= 1024 && n % 1024 == 0 {
        format!("{} KiB", n / 1024)
    } else {
        format!("{n} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_cause_is_printed_once() {
        let inner = anyhow::anyhow!("Error code 1544: attempt to write a readonly database");
        let e = inner
            .context("attempt to write a readonly database")
            .context("database error: attempt to write a readonly database")
            .context("opening r.db");
        assert_eq!(
            error_text(&e),
            "opening r.db: database error: attempt to write a readonly database"
        );
    }

    #[test]
    fn sizes_are_named_in_their_unit() {
        assert_eq!(human_bytes(MAX_INPUT_BYTES), "1 MiB");
        assert_eq!(human_bytes(2048), "2 KiB");
        assert_eq!(human_bytes(100), "100 bytes");
    }
}
