//! Issue 31 item 3: a reset clock time without a zone is read in the zone
//! the agent ran in (its candidate's `TZ`), not the machine's.

use std::os::unix::fs::PermissionsExt;

use chrono::{Duration, Timelike, Utc};
use chrono_tz::Tz;

use crate::common::{open_engine, uniform_policy};
use recourse::agent::{AgentKind, AgentSpec};
use recourse::engine::StartRun;
use recourse::policy::Exhausted;
use recourse::profile::CandidateInput;
use recourse::route::RouteState;

#[tokio::test]
async fn a_local_reset_time_is_read_in_the_candidates_tz() {
    let dir = tempfile::tempdir().unwrap();
    // Far from most machines' zones, and without DST.
    let zone: Tz = "Asia/Tokyo".parse().unwrap();
    let now = Utc::now().with_timezone(&zone);
    let hour = (now + Duration::hours(3)).hour();
    let (h12, half) = match hour {
        0 => (12, "am"),
        1..=11 => (hour, "am"),
        12 => (12, "pm"),
        _ => (hour - 12, "pm"),
    };
    // Claude Code's own wording for a plan window, with no zone.
    let result = format!(
        r#"{{"type":"result","subtype":"success","is_error":true,"result":"5-hour limit reached ∙ resets {h12}{half}"}}"#
    );
    let script = dir.path().join("claude");
    std::fs::write(&script, format!("#!/bin/sh\necho '{result}'\nexit 1\n")).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut agent = AgentSpec::simulated(Vec::new());
    agent.kind = AgentKind::ClaudeCode;
    agent.program = Some(script.display().to_string());
    agent.env.insert("TZ".into(), "Asia/Tokyo".into());

    let engine = open_engine(&dir.path().join("r.db"), false).await;
    let p = engine.create_profile("P").unwrap();
    let policy = uniform_policy(Some(86_400), None, Exhausted::Stop);
    engine
        .save_candidates(
            p.id,
            p.revision,
            vec![CandidateInput::new("claude", agent, policy)],
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
    let mut snapshot = None;
    for _ in 0..1000 {
        let detail = engine.route_detail(s.id).unwrap();
        if detail.snapshot.state != RouteState::Running {
            snapshot = Some(detail.snapshot);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    engine.shutdown().await;
    let snapshot = snapshot.expect("the route left running");
    assert_eq!(snapshot.state, RouteState::WaitingReset, "{snapshot:?}");
    let deadline = snapshot.deadline.expect("a wait has a deadline");
    let local = deadline.with_timezone(&zone);
    assert_eq!(
        (local.hour(), local.minute()),
        (hour, 0),
        "resets {h12}{half} in Tokyo, got {local}"
    );
    assert!(deadline > Utc::now() && deadline < Utc::now() + Duration::hours(4));
}
