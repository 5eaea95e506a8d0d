//! Route housekeeping: archive a route at rest (it leaves the everyday
//! lists, history kept), delete routes with their whole history, and the
//! retention the app applies (details of old finished routes first, then
//! the routes). Nothing here touches a route that runs or waits: only the
//! state machine changes those.

use std::path::{Path, PathBuf};

use super::{Engine, EngineError, Pruned, Retention, RouteSnapshot, WorkdirCheck};
use crate::route::RouteState;

/// States a person may archive or delete a route in: nothing of it runs
/// or waits for a timer.
pub const AT_REST: &[RouteState] = &[
    RouteState::NeedsManual,
    RouteState::Stopped,
    RouteState::Succeeded,
];

/// States retention removes routes in: done, or ended by a person. A route
/// that needs you is never removed by itself.
pub const RETAINED_UNTIL_EXPIRY: &[RouteState] = &[RouteState::Stopped, RouteState::Succeeded];

impl Engine {
    /// Archives route `id` (or brings it back with `archived = false`).
    /// Refused while it runs or waits.
    pub fn archive_route(&self, id: u32, archived: bool) -> Result<RouteSnapshot, EngineError> {
        let row = self.route_row(id)?;
        let at = archived.then(|| self.inner.clock.now());
        if !self.store().set_archived(id, at, AT_REST)? {
            return Err(busy(
                &self.route_row(id).unwrap_or(row).state,
                id,
                "archived",
            ));
        }
        let row = self.route_row(id)?;
        self.publish(&row);
        Ok(self.snapshot_of(&row))
    }

    /// Deletes routes `ids` with their whole history, in one transaction.
    /// Every id must exist and be at rest, or nothing is deleted.
    pub fn delete_routes(&self, ids: &[u32]) -> Result<Vec<u32>, EngineError> {
        for &id in ids {
            let row = self.route_row(id)?;
            if !AT_REST.contains(&row.state) {
                return Err(busy(&row.state, id, "deleted"));
            }
        }
        let deleted = self.store().delete_routes(ids, AT_REST)?;
        if let Some(moved) = ids.iter().find(|id| !deleted.contains(id)) {
            // It started again between the check and the delete: the
            // others are gone, this one is left as it is now.
            let state = self.route_row(*moved)?.state;
            return Err(busy(&state, *moved, "deleted"));
        }
        let mut book = self.book();
        for id in &deleted {
            book.published.remove(id);
            book.archived.remove(id);
        }
        Ok(deleted)
    }

    /// Applies `retention`: succeeded and stopped routes unchanged for its
    /// days lose their attempts' details, then are deleted.
    pub fn prune(&self, retention: Retention) -> Result<Pruned, EngineError> {
        let now = self.inner.clock.now();
        let before = |days: Option<u32>| days.map(|d| now - chrono::Duration::days(i64::from(d)));
        let count = self.store().prune(
            RETAINED_UNTIL_EXPIRY,
            before(retention.details_days),
            before(retention.routes_days),
        )?;
        Ok(Pruned {
            detail_rows: count.detail_rows,
            routes_deleted: count.routes_deleted,
        })
    }
}

fn busy(state: &RouteState, id: u32, what: &str) -> EngineError {
    EngineError::Conflict(format!(
        "route {id} {}: only a route that neither runs nor waits can be {what}; stop it first",
        state.after_the_route()
    ))
}

/// Where a run with working directory `dir` would run, and what to know
/// about it. An empty or absent `dir` is the directory Recourse itself runs
/// in, which is what a run without one uses.
pub fn inspect_workdir(dir: Option<&str>) -> WorkdirCheck {
    let given = dir.map(str::trim).filter(|d| !d.is_empty());
    let path = match given {
        Some(d) => PathBuf::from(d),
        None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
    };
    let shown = path.display().to_string();
    if let Some(problem) = crate::runner::not_a_directory(&path) {
        return WorkdirCheck {
            path: shown,
            problem: Some(problem),
            warning: None,
            git_root: None,
        };
    }
    let git_root = git_root(&path);
    WorkdirCheck {
        warning: git_root.is_none().then(|| {
            "not a git repository, so what the agent changes there cannot be reviewed or undone with git"
                .to_string()
        }),
        git_root: git_root.map(|r| r.display().to_string()),
        path: shown,
        problem: None,
    }
}

/// The nearest folder at or above `dir` holding `.git` (a folder, or the
/// file a worktree has).
fn git_root(dir: &Path) -> Option<PathBuf> {
    let absolute = std::path::absolute(dir).ok()?;
    absolute
        .ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_outside_git_is_usable_with_a_warning_and_a_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let plain = inspect_workdir(dir.path().to_str());
        assert_eq!(plain.problem, None);
        assert_eq!(
            plain.warning.as_deref(),
            Some(
                "not a git repository, so what the agent changes there cannot be reviewed or \
                 undone with git"
            ),
            "one sentence after the form's “Warning:”, no second colon"
        );
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        let inside = inspect_workdir(dir.path().join("src").to_str());
        assert_eq!(inside.warning, None, "a subfolder of a repository");
        assert_eq!(inside.git_root.as_deref(), dir.path().to_str());
        let file = dir.path().join("notes.txt");
        std::fs::write(&file, "x").unwrap();
        let refused = inspect_workdir(file.to_str());
        assert_eq!(
            refused.problem,
            Some(format!("{} is a file, not a directory", file.display())),
            "what is there, not only what is not"
        );
        let missing = inspect_workdir(dir.path().join("gone").to_str());
        assert_eq!(
            missing.problem,
            Some(format!(
                "{} does not exist",
                dir.path().join("gone").display()
            ))
        );
    }

    #[test]
    fn a_working_route_is_refused_naming_its_state_in_words() {
        assert_eq!(
            busy(&RouteState::WaitingReset, 3, "archived").to_string(),
            "route 3 is waiting for provider reset: only a route that neither runs nor waits \
             can be archived; stop it first",
            "the state as the app says it, not its code name"
        );
    }

    #[test]
    fn an_empty_field_names_the_directory_recourse_runs_in() {
        let check = inspect_workdir(Some("  "));
        assert_eq!(
            check.path,
            std::env::current_dir().unwrap().display().to_string()
        );
    }
}
