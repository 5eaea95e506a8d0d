//! Issue 31 items 6 and 9: a route keeps which `env` variables its
//! candidates set, never their values. A dispatch reads the values from the
//! profile; a variable the profile no longer sets fails that dispatch by
//! name; and once a profile's keys are removed, no value is left anywhere in
//! the database file.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use crate::common::{act_confirmed, open_engine, uniform_policy};
use recourse::agent::{AgentKind, AgentSpec};
use recourse::engine::{Engine, RouteSnapshot, StartRun};
use recourse::policy::Exhausted;
use recourse::profile::CandidateInput;
use recourse::route::{ManualAction, RouteState};

const VALUE: &str = "planted-value-31a7";

/// A command of one's own that writes `$PLANTED_SETTING` to `out` and fails.
fn writes_its_variable(dir: &Path, out: &Path) -> AgentSpec {
    let script = dir.join("agent.sh");
    let body = format!(
        "#!/bin/sh\nprintf '%s' \"$PLANTED_SETTING\" > '{}'\nexit 3\n",
        out.display()
    );
    std::fs::write(&script, body).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut agent = AgentSpec::simulated(Vec::new());
    agent.kind = AgentKind::Generic;
    agent.program = Some(script.display().to_string());
    agent
}

async fn at_rest(engine: &Engine, id: u32) -> RouteSnapshot {
    for _ in 0..1000 {
        let s = engine.route_detail(id).unwrap().snapshot;
        if s.state != RouteState::Running {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("route {id} still running after 10 s");
}

#[tokio::test]
async fn a_removed_variable_fails_the_next_dispatch_by_name_and_leaves_no_value_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("data").join("r.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let out = dir.path().join("seen");
    let mut agent = writes_its_variable(dir.path(), &out);
    agent.env.insert("PLANTED_SETTING".into(), VALUE.into());
    let engine = open_engine(&db, false).await;
    let p = engine.create_profile("Work").unwrap();
    let policy = uniform_policy(None, None, Exhausted::Stop);
    let p = engine
        .save_candidates(
            p.id,
            p.revision,
            vec![CandidateInput::new("own", agent.clone(), policy.clone())],
        )
        .unwrap();
    let s = engine
        .start_run(StartRun {
            profile_id: p.id,
            prompt: "p".into(),
            cwd: None,
        })
        .await
        .unwrap();
    let s = at_rest(&engine, s.id).await;
    assert_eq!(s.state, RouteState::NeedsManual, "{s:?}");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        VALUE,
        "the agent got the value from the profile, though the route keeps none"
    );

    // The person removes the variable from the candidate (same id).
    let mut input = CandidateInput::new("own", agent, policy);
    input.id = Some(p.candidates[0].id);
    input.agent.env.clear();
    engine
        .save_candidates(p.id, p.revision, vec![input])
        .unwrap();
    std::fs::remove_file(&out).unwrap();
    // The gate held it (its prompt delivery was ambiguous): the person said yes.
    act_confirmed(&engine, s.id, ManualAction::RetryNow, s.generation)
        .await
        .unwrap();
    let s = at_rest(&engine, s.id).await;
    engine.shutdown().await;
    drop(engine);
    assert_eq!(s.state, RouteState::NeedsManual, "{s:?}");
    assert!(s.cannot_start, "a dispatch that could not start: {s:?}");
    let reason = s.manual_reason.expect("why a person is needed");
    assert!(
        reason
            .contains("PLANTED_SETTING is no longer set on candidate \"own\" of profile \"Work\""),
        "the reason names the variable and where it was: {reason}"
    );
    assert!(!out.exists(), "the agent did not run without its variable");

    let holding = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(db.parent().unwrap())
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| {
                std::fs::read(path)
                    .is_ok_and(|bytes| bytes.windows(VALUE.len()).any(|w| w == VALUE.as_bytes()))
            })
            .collect()
    };
    // A report's task lets its engine go just after its commit, which this
    // thread may see first; the last connection to close checkpoints the
    // log away. Within that, nothing may keep the value.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !holding().is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(
        holding(),
        Vec::<std::path::PathBuf>::new(),
        "files still holding the removed value"
    );
}
