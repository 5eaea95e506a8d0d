//! Where the database lives unless `--db` says otherwise: the engine's
//! answer, which the CLI and the desktop shell share.

use std::path::PathBuf;

/// `--db`, else `RECOURSE_DB`, else `<data dir>/recourse/recourse.db` where the
/// data dir is `XDG_DATA_HOME` or `~/.local/share`.
pub fn default_db_path() -> PathBuf {
    if let Some(p) = std::env::var_os("RECOURSE_DB").filter(|v| !v.is_empty()) {
        return PathBuf::from(p);
    }
    crate::store::data_dir()
        .join("recourse")
        .join("recourse.db")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_path_honours_environment_in_order() {
        // One test owns these variables so parallel tests cannot interleave.
        std::env::set_var("RECOURSE_DB", "/tmp/x/custom.db");
        assert_eq!(default_db_path(), PathBuf::from("/tmp/x/custom.db"));
        std::env::remove_var("RECOURSE_DB");
        std::env::set_var("XDG_DATA_HOME", "/tmp/xdg");
        assert_eq!(
            default_db_path(),
            PathBuf::from("/tmp/xdg/recourse/recourse.db")
        );
        std::env::remove_var("XDG_DATA_HOME");
        std::env::set_var("HOME", "/home/someone");
        assert_eq!(
            default_db_path(),
            PathBuf::from("/home/someone/.local/share/recourse/recourse.db")
        );
    }
}
