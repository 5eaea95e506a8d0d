//! Logging: `tracing` to stderr and to a daily-rolling file in the app's log
//! directory. `RUST_LOG` picks the filter; the default is `info`. Colours
//! only on a terminal's stderr: the file, and stderr sent to a file or the
//! journal, get plain text.

use std::path::Path;

use tracing::Subscriber;
use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::{fmt, layer::SubscriberExt, util::SubscriberInitExt, EnvFilter};

/// Installs the global subscriber. Keep the guard alive for the life of the
/// app or buffered file lines are lost on exit.
pub fn init(log_dir: &Path) -> Option<WorkerGuard> {
    let (subscriber, guard, failed) = subscriber(log_dir, recourse::engine::stderr_log_colours());
    subscriber.init();
    match failed {
        // Said once the subscriber is there to say it.
        None => {
            recourse::engine::files::tighten_and_say(log_dir, recourse::engine::files::PRIVATE_DIR)
        }
        Some(err) => {
            tracing::warn!(dir = %log_dir.display(), %err, "log directory unavailable; logging to stderr only")
        }
    }
    guard
}

type Failed = Option<std::io::Error>;

/// The subscriber `init` installs: stderr (colours as `stderr_colours`
/// says) and, when `log_dir` can be made, the daily file, always plain.
fn subscriber(
    log_dir: &Path,
    stderr_colours: bool,
) -> (
    Box<dyn Subscriber + Send + Sync>,
    Option<WorkerGuard>,
    Failed,
) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let stderr = fmt::layer()
        .with_ansi(stderr_colours)
        .with_writer(std::io::stderr);
    // Private: log lines name profiles, folders and routes.
    match recourse::engine::files::create_private_dir(log_dir) {
        Ok(()) => {
            let appender = tracing_appender::rolling::daily(log_dir, "recourse.log");
            let (writer, guard) = tracing_appender::non_blocking(appender);
            // Its own field formatter: span fields are formatted once per
            // formatter type and shared, so with the same type as a
            // coloured stderr layer the file would get stderr's colours.
            let file = fmt::layer()
                .with_ansi(false)
                .fmt_fields(PlainFields::default())
                .with_writer(writer);
            let subscriber = tracing_subscriber::registry()
                .with(filter)
                .with(stderr)
                .with(file);
            (Box::new(subscriber), Some(guard), None)
        }
        Err(err) => {
            let subscriber = tracing_subscriber::registry().with(filter).with(stderr);
            (Box::new(subscriber), None, Some(err))
        }
    }
}

/// The default field format under a type of its own (see `subscriber`).
#[derive(Default)]
struct PlainFields(fmt::format::DefaultFields);

impl<'writer> fmt::FormatFields<'writer> for PlainFields {
    fn format_fields<R: tracing_subscriber::field::RecordFields>(
        &self,
        writer: fmt::format::Writer<'writer>,
        fields: R,
    ) -> std::fmt::Result {
        self.0.format_fields(writer, fields)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_folder_is_private_and_the_file_never_holds_colour_codes() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("logs");
        let (subscriber, guard, failed) = subscriber(&dir, true);
        assert!(failed.is_none());
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700,
            "the log folder is its owner's"
        );
        tracing::subscriber::with_default(subscriber, || {
            let span = tracing::info_span!("route", id = 7, profile = "Work");
            let _entered = span.enter();
            tracing::warn!(attempt = 2, "recording the attempt's report failed");
        });
        drop(guard);
        let file = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().contains("recourse.log"))
            .expect("the daily file was written");
        let text = std::fs::read_to_string(file).unwrap();
        assert!(
            text.contains("recording the attempt's report failed")
                && text.contains("id=7")
                && text.contains("attempt=2"),
            "the line and its fields are there: {text:?}"
        );
        assert!(!text.contains('\u{1b}'), "no escape codes: {text:?}");
    }
}
