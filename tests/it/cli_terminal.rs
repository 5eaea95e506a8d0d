//! Names, prompts and other stored text never reach a terminal raw: every
//! printer escapes control characters (window title OSC 0, clipboard OSC 52,
//! screen clear, C1 CSI, bidi override, a newline that forges a line), and
//! new names holding them, or only looking different from an existing
//! name, are refused.

use std::path::Path;
use std::process::Output;

use crate::common::{seed_profile, uniform_policy};
use recourse::agent::{AgentSpec, SimStep};
use recourse::controls::is_control;
use recourse::policy::Exhausted;
use recourse::profile::CandidateInput;

/// A profile name as a hostile document (or an older build) could have
/// stored it: sets the window title, writes the clipboard, clears the
/// screen, starts a C1 CSI, reverses text, and forges a line of output.
const PROFILE: &str =
    "Work\u{1b}]0;pwned\u{7}\u{1b}]52;c;ZWNobyBoaQ==\u{7}\u{1b}[2J\u{9b}31m\u{202e}\nroute 99 succeeded";
const CANDIDATE: &str = "opus\u{1b}[1A\u{1b}[2K\rroute 1 succeeded";
const PROMPT: &str = "fix it\u{1b}]52;c;cm0gLXJmIH4=\u{7}\u{9d}0;title\u{9c}";

use crate::common::recourse_on as recourse;

/// What a terminal would be sent, stdout then stderr.
fn shown(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn assert_terminal_safe(what: &str, out: &Output) {
    let text = shown(out);
    let raw: Vec<String> = text
        .chars()
        .filter(|c| *c != '\n' && is_control(*c))
        .map(|c| format!("U+{:04X}", u32::from(c)))
        .collect();
    assert!(
        raw.is_empty(),
        "`{what}` sent control characters {raw:?} to the terminal:\n{text}"
    );
    for line in text.lines() {
        assert!(
            !line.starts_with("route 99") && !line.starts_with("route 1 succeeded"),
            "`{what}` printed a line forged by a name: {line:?}"
        );
    }
}

#[test]
fn every_printer_escapes_control_characters_in_names_and_prompts() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    // Stored without the engine's validation, as an older build did.
    let agent = AgentSpec::simulated(vec![SimStep::ToolThenReset { after_ms: 10 }]);
    let policy = uniform_policy(None, None, Exhausted::Stop);
    seed_profile(
        &db,
        PROFILE,
        &[CandidateInput::new(CANDIDATE, agent, policy)],
    );

    let run = recourse(&db, &["run", "--profile", PROFILE, "--prompt", PROMPT]);
    assert_eq!(run.status.code(), Some(3), "{}", shown(&run));
    assert_terminal_safe("run", &run);
    assert!(
        shown(&run).contains(r"opus\u{1b}[1A\u{1b}[2K\rroute 1 succeeded"),
        "the name is shown, escaped: {}",
        shown(&run)
    );
    let printers: &[&[&str]] = &[
        &["routes"],
        &["routes", "--json"],
        &["route", "1"],
        &["route", "1", "--json"],
        &["profile", "list"],
        &["profile", "list", "--json"],
        &["profile", "show", PROFILE],
        &["profile", "show", PROFILE, "--json"],
        &["profile", "export", PROFILE],
        &["profile", "show", "nope"],
        &["profile", "import", "-", "--dry-run"],
    ];
    for args in printers {
        let out = recourse(&db, args);
        assert_terminal_safe(&args.join(" "), &out);
    }
    let listed = recourse(&db, &["profile", "list"]);
    assert_eq!(
        String::from_utf8_lossy(&listed.stdout).lines().count(),
        1,
        "one profile, one line"
    );
    let detail = String::from_utf8_lossy(&recourse(&db, &["route", "1"]).stdout).to_string();
    assert!(
        detail.contains(r"prompt: fix it\u{1b}]52;c;cm0gLXJmIH4=\u{7}\u{9d}0;title\u{9c}"),
        "the prompt is shown with its escapes written out: {detail}"
    );
    let json = recourse(&db, &["route", "1", "--json"]);
    let back: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        back["snapshot"]["profile_name"], PROFILE,
        "--json escapes as JSON: the value reads back exactly"
    );
}

fn import(db: &Path, document: &serde_json::Value) -> Output {
    let file = db.with_file_name(format!("doc-{}.json", rand_suffix()));
    std::fs::write(&file, document.to_string()).unwrap();
    recourse(db, &["profile", "import", file.to_str().unwrap()])
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

fn document(name: &str, candidates: &[&str]) -> serde_json::Value {
    let section = crate::common::stop_section_json();
    serde_json::json!({
        "version": 1,
        "name": name,
        "candidates": candidates.iter().map(|c| serde_json::json!({
            "name": c,
            "agent": { "kind": "simulated", "script": [{ "outcome": "succeed", "after_ms": 1 }] },
            "transient": section,
            "hard": section,
        })).collect::<Vec<_>>(),
    })
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

#[test]
fn names_with_control_characters_are_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let out = import(&db, &document("Work\u{1b}]0;x\u{7}", &["opus"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).lines().nth(1),
        Some("  Profile name: a profile name cannot hold control characters (found U+001B at character 5) (at name)")
    );
    let out = import(&db, &document("Work", &["opus\nroute 1 succeeded"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "› Name: a candidate name cannot hold control characters (found U+000A at character 5) (at candidates[0].name)"
        ),
        "{}",
        stderr(&out)
    );
    let out = recourse(&db, &["profile", "create", "a\u{9b}2J"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "error: name: a profile name cannot hold control characters (found U+009B at character 2)\n"
    );
    assert!(
        !db.exists() || recourse(&db, &["profile", "list", "--json"]).stdout == b"[]\n",
        "nothing was written"
    );
}

#[test]
fn a_name_differing_only_by_invisible_characters_or_normalization_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let out = import(&db, &document("Caf\u{e9}", &["opus"]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let out = import(&db, &document("Cafe\u{301}", &["opus"]));
    assert_eq!(
        out.status.code(),
        Some(2),
        "NFD is the same name: {}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("error: a profile named “Café” already exists; `--replace`"),
        "{}",
        stderr(&out)
    );

    let out = import(&db, &document("Caf\u{e9}\u{200b}", &["opus"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "a profile named “Café” already exists, and “Café\\u{200b}” is the same name to a \
             reader: it differs only by invisible characters"
        ),
        "{}",
        stderr(&out)
    );
    let out = recourse(&db, &["profile", "create", "\u{feff}Caf\u{e9}"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let out = recourse(&db, &["profile", "create", "Other"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = recourse(&db, &["profile", "rename", "Other", "Caf\u{e9}\u{2060}"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));

    let out = import(&db, &document("Two", &["opus", "op\u{200d}us"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "› Name: duplicate candidate name \"op\\u{200d}us\" (also candidates[0]); it differs only by invisible characters from \"opus\" (at candidates[1].name)"
        ),
        "{}",
        stderr(&out)
    );
    let listed = recourse(&db, &["profile", "list", "--json"]);
    let names: Vec<String> = serde_json::from_slice::<serde_json::Value>(&listed.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["Café", "Other"], "no look-alike was stored");
}
