//! Logging: `tracing` to stderr and to a daily-rolling file in the app's log
//! directory. `RUST_LOG` picks the filter; the default is `info`.

use std::path::Path;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::{fmt, layer::SubscriberExt, util::SubscriberInitExt, EnvFilter};

/// Installs the global subscriber. Keep the guard alive for the life of the
/// app or buffered file lines are lost on exit.
pub fn init(log_dir: &Path) -> Option<WorkerGuard> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let stderr = fmt::layer().with_writer(std::io::stderr);
    match std::fs::create_dir_all(log_dir) {
        Ok(()) => {
            let appender = tracing_appender::rolling::daily(log_dir, "recourse.log");
            let (writer, guard) = tracing_appender::non_blocking(appender);
            let file = fmt::layer().with_ansi(false).with_writer(writer);
            tracing_subscriber::registry()
                .with(filter)
                .with(stderr)
                .with(file)
                .init();
            Some(guard)
        }
        Err(err) => {
            tracing_subscriber::registry()
                .with(filter)
                .with(stderr)
                .init();
            tracing::warn!(dir = %log_dir.display(), %err, "log directory unavailable; logging to stderr only");
            None
        }
    }
}
