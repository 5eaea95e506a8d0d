//! The profile document: every file under `fixtures/profiles/` reads as its
//! name says (a valid example round-trips; `invalid-NAME.json` is refused
//! with exactly the lines of `invalid-NAME.expected`), and the committed
//! JSON Schema is the one the Rust types generate.

use std::path::{Path, PathBuf};

use recourse::profile::document::{json_schema, load, ProfileError};

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/profiles");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_profile_fixture_reads_as_its_name_says() {
    let mut failures = Vec::new();
    let files = fixtures();
    assert!(files.len() >= 6, "the fixtures are found: {files:?}");
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&file).unwrap();
        let result = load(&text);
        if name.starts_with("invalid-") {
            let expected_file = file.with_extension("expected");
            let expected = std::fs::read_to_string(&expected_file)
                .unwrap_or_else(|_| panic!("{} is missing", expected_file.display()));
            let got = match result {
                Ok(_) => vec!["(loaded)".to_string()],
                Err(e) => e.errors().iter().map(ToString::to_string).collect(),
            };
            let want: Vec<String> = expected.lines().map(str::to_string).collect();
            if got != want {
                failures.push(format!("{name}:\n  want {want:#?}\n  got  {got:#?}"));
            }
        } else {
            match result {
                Ok(loaded) => {
                    let again = load(&loaded.document.to_json_pretty())
                        .expect("an exported document loads");
                    if again.document != loaded.document {
                        failures.push(format!("{name}: export → load changed the document"));
                    }
                }
                Err(e) => failures.push(format!("{name}: refused: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_document_over_one_mebibyte_is_refused_before_parsing() {
    let text = format!("{{\"pad\": \"{}\"}}", " ".repeat(1024 * 1024));
    assert_eq!(load(&text), Err(ProfileError::TooLarge));
}

#[test]
fn the_committed_json_schema_is_the_generated_one() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/profile.schema.json");
    let generated = format!(
        "{}\n",
        serde_json::to_string_pretty(&json_schema()).unwrap()
    );
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "schemas/profile.schema.json is stale; regenerate it with \
         `UPDATE_SCHEMA=1 cargo test --test it profile_documents::`"
    );
}
