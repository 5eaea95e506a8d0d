//! Bundles the built-in catalogue fixtures into the library, so the app and
//! the CLI can check a local rule against every one of them on a machine
//! that has no copy of this repository.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let dir = root.join("fixtures/catalogue");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files = Vec::new();
    collect(&dir, &mut files);
    files.sort();
    let mut code = String::from("pub static BUILTIN_FIXTURES: &[(&str, &str)] = &[\n");
    for file in files {
        let name = file
            .strip_prefix(&dir)
            .expect("under the fixtures folder")
            .to_string_lossy()
            .replace('\\', "/");
        writeln!(
            code,
            "    ({name:?}, include_str!({:?})),",
            file.display().to_string()
        )
        .expect("writing to a String");
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo"));
    std::fs::write(out.join("builtin_fixtures.rs"), code).expect("OUT_DIR is writable");
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("fixtures/catalogue is readable") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            collect(&path, files);
        } else if path.extension().is_some_and(|e| e == "toml") {
            files.push(path);
        }
    }
}
