//! The native file and folder choosers, each shown by a child process of
//! this same binary (`recourse-app --choose-path`).
//!
//! Why not in this process: GTK's chooser opens and closes every file of the
//! folder it lists (to guess its type), the database and its `-wal`/`-shm`
//! among them when a person browses the database's folder. Closing any
//! descriptor of a file drops every POSIX lock this process holds on it, so
//! the next `recourse` CLI to close its connection believed it was the last
//! one, checkpointed and deleted the journal under the open app: every view
//! then read "database disk image is malformed" until a restart. A child
//! process holds no lock to lose.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use crate::error::IpcError;

/// The argument that makes `recourse-app` show one chooser and exit.
pub const CHOOSE_PATH_ARG: &str = "--choose-path";

/// What to choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum PathKind {
    /// An existing file to read.
    OpenFile,
    /// Where to write a file (the chooser asks before replacing one).
    SaveFile,
    /// An existing folder.
    Folder,
}

/// One group of file name extensions the chooser offers (`JSON`, `["json"]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct FileFilter {
    pub name: String,
    pub extensions: Vec<String>,
}

/// A chooser to show: its title, the folder it starts in and, to save, the
/// proposed file name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct PathRequest {
    pub kind: PathKind,
    pub title: String,
    /// The folder it opens in; the chooser's own choice when absent or not a
    /// folder.
    pub start_in: Option<String>,
    pub file_name: Option<String>,
    pub filters: Vec<FileFilter>,
}

/// The child's one line on stdout: the chosen path, or none when the person
/// cancelled.
#[derive(Debug, Serialize, Deserialize)]
struct Chosen {
    path: Option<PathBuf>,
}

/// Set while a chooser is shown: a second one would open beside it, since a
/// window of another process is not modal to ours.
static SHOWN: AtomicBool = AtomicBool::new(false);

/// The one chooser shown at a time; dropping it lets the next one show.
struct Showing;

impl Showing {
    fn claim() -> Result<Showing, IpcError> {
        if SHOWN.swap(true, Ordering::SeqCst) {
            return Err(IpcError::io(
                &"A file chooser is already open: choose or cancel there first",
            ));
        }
        Ok(Showing)
    }
}

impl Drop for Showing {
    fn drop(&mut self) {
        SHOWN.store(false, Ordering::SeqCst);
    }
}

/// Shows the chooser `request` asks for; the chosen path, or `None` when
/// the person cancelled.
#[tauri::command]
#[specta::specta]
pub async fn choose_path(request: PathRequest) -> Result<Option<String>, IpcError> {
    let _showing = Showing::claim()?;
    run_child(&request)
        .await
        .map_err(|why| IpcError::io(&format!("Could not open the file chooser: {why}")))
}

async fn run_child(request: &PathRequest) -> Result<Option<String>, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let json = serde_json::to_string(request).map_err(|e| e.to_string())?;
    let out = tokio::process::Command::new(exe)
        .arg(CHOOSE_PATH_ARG)
        .arg(json)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // The app quitting takes its chooser with it.
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| e.to_string())?;
    read_answer(out.status.success(), &out.stdout, &out.stderr)
}

/// The child's answer: its path, or why it showed none.
fn read_answer(success: bool, stdout: &[u8], stderr: &[u8]) -> Result<Option<String>, String> {
    // GTK may print before the answer; the answer is the last line.
    let out = String::from_utf8_lossy(stdout);
    let line = out.trim().lines().last().unwrap_or("");
    match serde_json::from_str::<Chosen>(line) {
        Ok(chosen) if success => Ok(chosen.path.map(|p| p.display().to_string())),
        _ => {
            let err = String::from_utf8_lossy(stderr);
            let why = err.trim().lines().last().unwrap_or("").trim();
            Err(if why.is_empty() {
                "it ended without an answer".to_string()
            } else {
                why.to_string()
            })
        }
    }
}

/// The child's whole life: shows the chooser `arg` (a [`PathRequest`] as
/// JSON) describes and prints a [`Chosen`] line.
pub fn child_main(arg: Option<String>) -> ExitCode {
    // An app killed outright does not leave its chooser behind.
    // SAFETY: PR_SET_PDEATHSIG only sets the signal this process gets when
    // its parent dies; it reads its integer arguments only.
    #[allow(unsafe_code)]
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
    }
    let request = match arg.as_deref().map(serde_json::from_str::<PathRequest>) {
        Some(Ok(request)) => request,
        Some(Err(e)) => return fail(&format!("{CHOOSE_PATH_ARG}: not a chooser request: {e}")),
        None => return fail(&format!("{CHOOSE_PATH_ARG}: the request is missing")),
    };
    let path = match show(&request) {
        Ok(path) => path,
        Err(why) => return fail(&why),
    };
    let line = serde_json::to_string(&Chosen { path }).expect("a path list serialises");
    let mut stdout = std::io::stdout();
    if writeln!(stdout, "{line}")
        .and_then(|()| stdout.flush())
        .is_err()
    {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

fn fail(why: &str) -> ExitCode {
    eprintln!("{why}");
    ExitCode::FAILURE
}

/// GTK's own chooser, on this process's main thread; an error when GTK
/// cannot start (no display), where a chooser library would wait forever.
fn show(request: &PathRequest) -> Result<Option<PathBuf>, String> {
    use gtk::prelude::*;
    use gtk::{FileChooserAction, FileChooserDialog, ResponseType};

    gtk::init().map_err(|e| format!("no display to show it on ({e})"))?;
    let (action, accept) = match request.kind {
        PathKind::OpenFile => (FileChooserAction::Open, "_Open"),
        PathKind::SaveFile => (FileChooserAction::Save, "_Save"),
        PathKind::Folder => (FileChooserAction::SelectFolder, "_Select"),
    };
    let dialog = FileChooserDialog::with_buttons(
        Some(&request.title),
        None::<&gtk::Window>,
        action,
        &[
            ("_Cancel", ResponseType::Cancel),
            (accept, ResponseType::Accept),
        ],
    );
    dialog.set_default_response(ResponseType::Accept);
    dialog.set_do_overwrite_confirmation(true);
    if let Some(dir) = request
        .start_in
        .as_deref()
        .filter(|d| Path::new(d).is_dir())
    {
        dialog.set_current_folder(dir);
    }
    if let Some(name) = &request.file_name {
        dialog.set_current_name(name);
    }
    for wanted in &request.filters {
        let filter = gtk::FileFilter::new();
        filter.set_name(Some(&wanted.name));
        for ext in &wanted.extensions {
            filter.add_pattern(&format!("*.{ext}"));
        }
        dialog.add_filter(filter);
    }
    let chosen = (dialog.run() == ResponseType::Accept)
        .then(|| dialog.filename())
        .flatten();
    dialog.close();
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chosen_path_and_a_cancel_are_both_answers() {
        assert_eq!(
            read_answer(true, b"{\"path\":\"/home/me/p.json\"}\n", b""),
            Ok(Some("/home/me/p.json".to_string()))
        );
        assert_eq!(
            read_answer(true, b"Gtk-Message: a theme note\n{\"path\":null}\n", b""),
            Ok(None),
            "a cancel is the last line, after whatever GTK printed"
        );
    }

    #[test]
    fn a_chooser_that_could_not_show_says_why_from_its_last_error_line() {
        // GTK prints warnings before the error that ended it; the last line is the cause.
        let stderr = b"Gtk-WARNING: theme parsing\nGtk-WARNING **: cannot open display: :99\n";
        assert_eq!(
            read_answer(false, b"", stderr),
            Err("Gtk-WARNING **: cannot open display: :99".to_string())
        );
        assert_eq!(
            read_answer(false, b"", b""),
            Err("it ended without an answer".to_string()),
            "a child that died silently still gets a sentence"
        );
    }

    #[test]
    fn a_second_chooser_is_refused_until_the_first_is_answered() {
        let first = Showing::claim().expect("none is shown yet");
        let second = Showing::claim().err().expect("one is already shown");
        assert_eq!(
            second.message,
            "A file chooser is already open: choose or cancel there first"
        );
        drop(first);
        assert!(
            Showing::claim().is_ok(),
            "the answered chooser frees its place"
        );
    }
}
