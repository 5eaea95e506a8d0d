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
    /// The profile the run form starts with.
    #[serde(default)]
    pub default_profile: Option<u32>,
    /// The working directory a run uses when its field is left empty;
    /// `None`: the directory Recourse was started in.
    #[serde(default)]
    pub default_cwd: Option<String>,
    /// Which route events raise a desktop notification.
    #[serde(default)]
    pub notify: Notifications,
    /// How long finished routes are kept.
    #[serde(default)]
    pub retention: recourse::engine::Retention,
}

/// Which route events raise a desktop notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct Notifications {
    /// A route needs you (on by default).
    pub needs_you: bool,
    /// A route succeeded.
    pub succeeded: bool,
    /// A route starts waiting for a provider's reset.
    pub waiting: bool,
}

impl Default for Notifications {
    fn default() -> Self {
        Notifications {
            needs_you: true,
            succeeded: false,
            waiting: false,
        }
    }
}

/// Longest retention a setting takes, in days (ten years).
pub const MAX_RETENTION_DAYS: u32 = 3650;

impl Settings {
    /// Every problem with these settings, at its field; nothing is saved
    /// while there is one.
    pub fn problems(&self) -> Vec<recourse::policy::FieldError> {
        use recourse::policy::FieldError;
        let mut problems = Vec::new();
        let r = self.retention;
        for (field, days) in [
            ("retention.details_days", r.details_days),
            ("retention.routes_days", r.routes_days),
        ] {
            if days.is_some_and(|d| !(1..=MAX_RETENTION_DAYS).contains(&d)) {
                problems.push(FieldError::new(
                    field,
                    format!(
                        "must be 1 to {MAX_RETENTION_DAYS} days {}",
                        recourse::amount::too_few_or_many(1, days.unwrap_or(0))
                    ),
                ));
            }
        }
        if let (Some(details), Some(routes)) = (r.details_days, r.routes_days) {
            if details > routes {
                problems.push(FieldError::new(
                    "retention.details_days",
                    format!(
                        "details go first: at most the {routes} days routes are kept ({details} is \
                         too many)"
                    ),
                ));
            }
        }
        if let Some(dir) = &self.default_cwd {
            if let Some(problem) = recourse::engine::inspect_workdir(Some(dir)).problem {
                problems.push(FieldError::new("default_cwd", problem));
            }
        }
        problems
    }
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
            default_cwd: Some("/tmp".into()),
            ..Settings::default()
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
    fn a_file_from_before_the_newer_settings_reads_with_their_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_in(dir.path());
        std::fs::write(&path, r#"{"close_while_active":"quit"}"#).unwrap();
        let read = load(&path);
        assert_eq!(read.close_while_active, Some(CloseChoice::Quit));
        assert!(
            read.notify.needs_you,
            "needing you notifies unless turned off"
        );
        assert_eq!(read.retention, recourse::engine::Retention::default());
    }

    #[test]
    fn retention_keeps_details_no_longer_than_routes_and_within_bounds() {
        let with = |details_days, routes_days| Settings {
            retention: recourse::engine::Retention {
                details_days,
                routes_days,
            },
            ..Settings::default()
        };
        assert!(with(Some(7), Some(30)).problems().is_empty());
        let paths = |s: Settings| -> Vec<String> {
            s.problems().into_iter().map(|p| p.to_string()).collect()
        };
        assert_eq!(
            paths(with(Some(40), Some(30))),
            ["retention.details_days: details go first: at most the 30 days routes are kept (40 is too many)"]
        );
        assert_eq!(
            paths(with(None, Some(0))),
            ["retention.routes_days: must be 1 to 3650 days (0 is too few)"]
        );
    }

    #[test]
    fn an_unreadable_file_is_the_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_in(dir.path());
        std::fs::write(&path, "{not json").unwrap();
        assert_eq!(load(&path), Settings::default());
    }
}
