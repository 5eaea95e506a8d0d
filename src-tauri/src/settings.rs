//! The desktop app's own preferences, in `settings.json` in the app config
//! dir (`~/.config/dev.recourse.app/` on Linux). They belong to this
//! machine's app, not to the route database (which the CLI and a backup
//! share), so they are a small file, written atomically: a temporary file
//! beside it, synced, then renamed over it. A missing or unreadable file is
//! the defaults (the unreadable one is logged and left until the next save).
//!
//! Start at login is not here: the autostart plugin's desktop entry is the
//! one record of it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What closing the window does while routes are waiting or running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum CloseChoice {
    /// Hide the window; Recourse keeps running in the tray.
    KeepRunning,
    /// Quit; waits are kept and adopted at the next start.
    Quit,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Settings {
    /// The remembered answer to "Keep Recourse running in the tray while
    /// routes wait?"; `None`: ask each time.
    #[serde(default)]
    pub close_while_active: Option<CloseChoice>,
}

pub const FILE_NAME: &str = "settings.json";

pub fn path_in(config_dir: &Path) -> PathBuf {
    config_dir.join(FILE_NAME)
}

/// The stored settings, or the defaults when there are none.
pub fn load(path: &Path) -> Settings {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|err| {
            tracing::warn!(path = %path.display(), %err, "settings unreadable; using defaults");
            Settings::default()
        }),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Settings::default(),
        Err(err) => {
            tracing::warn!(path = %path.display(), %err, "settings unreadable; using defaults");
            Settings::default()
        }
    }
}

/// Writes `settings` so that a crash leaves either the old file or the new
/// one, never half of one.
pub fn save(path: &Path, settings: &Settings) -> std::io::Result<()> {
    let text = serde_json::to_vec_pretty(settings).map_err(std::io::Error::other)?;
    recourse::engine::files::write_private(path, &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_is_the_defaults_and_a_saved_choice_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_in(&dir.path().join("new-dir"));
        assert_eq!(load(&path), Settings::default());
        let keep = Settings {
            close_while_active: Some(CloseChoice::KeepRunning),
        };
        save(&path, &keep).unwrap();
        assert_eq!(load(&path), keep);
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [FILE_NAME], "no temporary file left behind");
    }

    #[test]
    fn an_unreadable_file_is_the_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_in(dir.path());
        std::fs::write(&path, "{not json").unwrap();
        assert_eq!(load(&path), Settings::default());
    }
}
