//! The file chooser's own process (`recourse-app --choose-path`), run as the
//! app runs it: a request it cannot read and a display it cannot reach are
//! each refused with a sentence on stderr and a failed exit, never a hang
//! or a window. (Showing a real chooser is the end-to-end test's:
//! `ui/tests/e2e/file-chooser.test.mjs`.)

use std::process::{Command, Output};

fn chooser(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_recourse-app"))
        .args(args)
        // No display: a chooser that reached one would wait for a person.
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .expect("the app binary runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_request_that_is_not_json_is_refused_by_name() {
    let out = chooser(&["--choose-path", "{kind: folder"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--choose-path: not a chooser request:"),
        "{}",
        stderr(&out)
    );
    assert!(
        out.stdout.is_empty(),
        "no answer is printed for a refused request"
    );
}

#[test]
fn a_missing_request_is_refused() {
    let out = chooser(&["--choose-path"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--choose-path: the request is missing"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn without_a_display_the_chooser_says_so_instead_of_waiting() {
    let request = r#"{"kind":"folder","title":"Default working directory","start_in":null,"file_name":null,"filters":[]}"#;
    let out = chooser(&["--choose-path", request]);
    assert!(!out.status.success());
    let last = stderr(&out).trim().lines().last().unwrap_or("").to_string();
    assert!(
        last.starts_with("no display to show it on"),
        "the last line is the cause the app shows: {last}"
    );
}
