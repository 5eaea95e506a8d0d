//! Files only their owner may read or list: the data folder (0700), the
//! database and its `-wal` and `-shm` files, the local catalogue, logs,
//! exported documents and their temporary files (0600). Profiles hold
//! commands, folders and, where no keyring runs, keys.
//!
//! Files are written through a temporary file in the same folder, created
//! 0600 before anything is written to it, and a rename, so a reader never
//! sees half a file and no byte is ever readable by others.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A folder only its owner may enter.
pub const PRIVATE_DIR: u32 = 0o700;
/// A file only its owner may read and write.
pub const PRIVATE_FILE: u32 = 0o600;

/// Creates `dir` and any missing parents 0700 (an existing one is left as
/// it is: see [`tighten`]).
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(PRIVATE_DIR)
        .create(dir)
}

/// Writes `bytes` to `path` 0600, through a temporary file and a rename,
/// creating the folder 0700 when missing: the one atomic write. The file
/// and then the folder are synced, so after a crash `path` holds the old
/// bytes or the new ones, never a mix or nothing.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    create_private_dir(dir)?;
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("not a file name"))?;
    let (tmp, mut file) = new_temporary(dir, &name.to_string_lossy())?;
    let written = (|| {
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)?;
        std::fs::File::open(dir)?.sync_all()
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// A new temporary file for `name` in `dir`, 0600, named for this process
/// and a counter so no other writer, thread or process, ever opens it;
/// `create_new` also refuses a file or link planted at that name (the
/// folder may be a shared one such as `/tmp`), and the next name is tried.
fn new_temporary(dir: &Path, name: &str) -> std::io::Result<(PathBuf, std::fs::File)> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(PRIVATE_FILE)
            .open(&tmp)
        {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Creates an empty file at `path` 0600 unless something is there already,
/// so that SQLite (which creates files 0644) finds it and keeps its mode
/// for its `-wal` and `-shm` files. An empty file is an empty database.
pub fn create_private_file(path: &Path) -> std::io::Result<()> {
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(PRIVATE_FILE)
        .open(path)
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// A mode that was tightened: the path and its old permission bits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tightened {
    pub path: PathBuf,
    pub was: u32,
    pub now: u32,
}

/// Takes group and other permissions off `path` (a folder keeps its owner
/// bits; `private` is 0700 or 0600), when it exists, is ours and has any.
/// `Ok(None)` when nothing needed changing.
pub fn tighten(path: &Path, private: u32) -> std::io::Result<Option<Tightened>> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let was = meta.permissions().mode() & 0o7777;
    if was & 0o077 == 0 {
        return Ok(None);
    }
    let now = was & private & 0o700;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(now))?;
    Ok(Some(Tightened {
        path: path.to_path_buf(),
        was,
        now,
    }))
}

/// [`tighten`], saying in the log what was changed, or why it could not be.
pub fn tighten_and_say(path: &Path, private: u32) {
    match tighten(path, private) {
        Ok(None) => {}
        Ok(Some(t)) => tracing::warn!(
            "{} was readable by others ({:o}); its permissions are now {:o}",
            t.path.display(),
            t.was,
            t.now
        ),
        Err(e) => tracing::warn!(
            "{} may be readable by others and could not be made private: {e}",
            path.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn written_files_and_created_folders_are_private() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a/b/doc.json");
        write_private(&file, b"{}").unwrap();
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(&dir.path().join("a")), 0o700);
        assert_eq!(mode(&dir.path().join("a/b")), 0o700);
        write_private(&file, b"{\"again\": 1}").unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"{\"again\": 1}");
        let left: Vec<_> = std::fs::read_dir(dir.path().join("a/b")).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file left");
    }

    #[test]
    fn writers_racing_on_one_path_leave_one_whole_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("rules.toml");
        // Large enough that interleaved or truncated writes would show.
        let texts: Vec<Vec<u8>> = (b'a'..=b'h').map(|c| vec![c; 256 * 1024]).collect();
        std::thread::scope(|scope| {
            for text in &texts {
                let file = &file;
                scope.spawn(move || {
                    for _ in 0..20 {
                        write_private(file, text).expect("every write succeeds");
                    }
                });
            }
        });
        let got = std::fs::read(&file).unwrap();
        assert!(
            texts.contains(&got),
            "the file is one writer's whole text, not a mix ({} bytes)",
            got.len()
        );
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file left");
    }

    #[test]
    fn a_looser_file_or_folder_is_tightened_and_a_private_one_left() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("r.db");
        std::fs::write(&file, b"").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o664)).unwrap();
        let t = tighten(&file, PRIVATE_FILE).unwrap().unwrap();
        assert_eq!((t.was, t.now), (0o664, 0o600));
        assert_eq!(mode(&file), 0o600);
        assert_eq!(
            tighten(&file, PRIVATE_FILE).unwrap(),
            None,
            "already private"
        );
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        tighten(dir.path(), PRIVATE_DIR).unwrap();
        assert_eq!(mode(dir.path()), 0o700);
        assert_eq!(
            tighten(&dir.path().join("none"), PRIVATE_FILE).unwrap(),
            None
        );
    }
}
