//! Working-tree evidence: which files an attempt changed, when its working
//! directory is a git repository. Read with the real `git` before and after
//! the attempt (`git status --porcelain`, each listed file's size and
//! modification time, `git diff --stat`), bounded. It informs a person; it
//! never relaxes the safety gate (no change in the tree does not prove no
//! effects: a tool may have written elsewhere, or sent something).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::agent::transcript::{FileChange, FilesChanged};

/// Files listed at most; the rest are counted.
const MAX_FILES: usize = 200;
/// Bytes of `git status` and `git diff --stat` output read at most.
const MAX_OUTPUT: usize = 1 << 20;
const MAX_DIFF_STAT: usize = 4096;
/// A git that does not answer within this is given up on.
const GIT_WITHIN: Duration = Duration::from_secs(10);

/// The tree as git sees it at one moment: each file git lists (changed,
/// new or deleted against the last commit) with its status and what the
/// file system says of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeState {
    root: PathBuf,
    files: BTreeMap<String, (String, Option<(u64, i128)>)>,
}

/// The tree at `dir`, when it is inside a git repository and git answers.
pub async fn snapshot(dir: &Path) -> Option<TreeState> {
    let root = git(dir, &["rev-parse", "--show-toplevel"]).await?;
    let root = PathBuf::from(String::from_utf8_lossy(&root).trim());
    let listed = git(
        &root,
        &["status", "--porcelain=v1", "-z", "--untracked-files=all"],
    )
    .await?;
    let mut files = BTreeMap::new();
    for entry in listed.split(|b| *b == 0).filter(|e| e.len() > 3) {
        let entry = String::from_utf8_lossy(entry);
        let (status, path) = entry.split_at(2);
        let path = path.trim_start().to_string();
        let stat = file_stat(&root.join(&path));
        files.insert(path, (status.trim().to_string(), stat));
    }
    Some(TreeState { root, files })
}

/// What changed from `before` to `after`: a file listed in either whose
/// status, size or modification time differs.
pub async fn changes(dir: &Path, before: &TreeState, after: &TreeState) -> FilesChanged {
    let mut changed: Vec<FileChange> = Vec::new();
    for (path, now) in &after.files {
        if before.files.get(path) != Some(now) {
            changed.push(FileChange {
                path: path.clone(),
                status: now.0.clone(),
            });
        }
    }
    for path in before.files.keys() {
        if !after.files.contains_key(path) {
            changed.push(FileChange {
                path: path.clone(),
                status: String::new(),
            });
        }
    }
    changed.sort_by(|a, b| a.path.cmp(&b.path));
    let more = changed.len().saturating_sub(MAX_FILES);
    changed.truncate(MAX_FILES);
    let diff_stat = if changed.is_empty() {
        String::new()
    } else {
        let stat = git(&after.root, &["diff", "--stat", "--no-color"])
            .await
            .unwrap_or_default();
        crate::agent::transcript::cut(&String::from_utf8_lossy(&stat), MAX_DIFF_STAT)
    };
    FilesChanged {
        dir: dir.display().to_string(),
        files: changed,
        more: u32::try_from(more).unwrap_or(u32::MAX),
        diff_stat,
    }
}

/// Size and modification time (nanoseconds), when the file is there.
fn file_stat(path: &Path) -> Option<(u64, i128)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(path).ok()?;
    Some((
        m.len(),
        i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
    ))
}

/// `git ARGS` in `dir`: its stdout (at most [`MAX_OUTPUT`] bytes) when it
/// succeeds within [`GIT_WITHIN`]; `None` otherwise (no git, not a
/// repository, hung). Git's own hooks and pagers are kept out.
async fn git(dir: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let mut cmd = tokio::process::Command::new("git");
    cmd.arg("-C")
        .arg(dir)
        .args(["-c", "core.fsmonitor=false", "--no-optional-locks"])
        .args(args)
        .env("GIT_PAGER", "cat")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    let out = tokio::time::timeout(GIT_WITHIN, cmd.output())
        .await
        .ok()?
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let mut stdout = out.stdout;
    stdout.truncate(MAX_OUTPUT);
    Some(stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(dir: &Path, script: &str) {
        let ok = std::process::Command::new("sh")
            .arg("-c")
            .arg(script)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .status()
            .unwrap()
            .success();
        assert!(ok, "{script}");
    }

    #[tokio::test]
    async fn the_files_an_attempt_changed_are_listed_and_the_ones_it_left_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        sh(
            d,
            "git init -q && echo a > kept.txt && echo b > edited.txt && echo c > gone.txt \
             && git add . && git commit -qm init && echo dirty > dirty-before.txt",
        );
        let before = snapshot(d).await.expect("a git repository");
        // The attempt: edits one file, adds one, deletes one; leaves the rest.
        std::thread::sleep(std::time::Duration::from_millis(20));
        sh(d, "echo B >> edited.txt && echo n > new.txt && rm gone.txt");
        let after = snapshot(d).await.unwrap();
        let changed = changes(d, &before, &after).await;
        let listed: Vec<(&str, &str)> = changed
            .files
            .iter()
            .map(|f| (f.path.as_str(), f.status.as_str()))
            .collect();
        assert_eq!(
            listed,
            [("edited.txt", "M"), ("gone.txt", "D"), ("new.txt", "??")],
            "a file dirty before and untouched is not the attempt's"
        );
        assert!(
            changed.diff_stat.contains("edited.txt"),
            "{}",
            changed.diff_stat
        );
    }

    #[tokio::test]
    async fn a_directory_that_is_not_a_repository_has_no_tree_evidence() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(snapshot(dir.path()).await, None);
    }
}
