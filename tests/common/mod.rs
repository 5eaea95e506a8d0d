//! Setup shared by the engine integration tests: opening an engine in a temp
//! directory, seeding a profile straight into the store, candidate policies
//! and the fake agents in `fixtures/agents/`.
//!
//! Each test binary compiles this module and uses only part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use chrono::Utc;
use recourse::engine::pipeline::{self, CandidatePolicy, PendingOutcome, SectionSpec};
use recourse::engine::{
    ActionRequest, AgentKind, AgentSpec, CandidateInput, Engine, EngineError, EngineOptions,
    ManualAction, RouteSnapshot,
};
use recourse::store::Store;

/// Opens an engine on `db`, seeding the demo profile only if asked.
pub async fn open_engine(db: &Path, seed_demo: bool) -> Engine {
    let opts = EngineOptions {
        seed_demo,
        ..EngineOptions::default()
    };
    Engine::open(db, opts).await.expect("engine opens")
}

/// Creates profile `name` holding `candidates` directly in the store, as a
/// person would have before running the binary.
pub fn seed_profile(db: &Path, name: &str, candidates: &[CandidateInput]) {
    let mut store = Store::open(db).unwrap();
    let id = store.create_profile(name, Utc::now()).unwrap();
    store
        .save_candidates(id, 1, candidates, Utc::now())
        .unwrap()
        .unwrap();
}

/// The same section for transient and hard failures.
pub fn uniform_policy(
    reset_wait_max_s: Option<u32>,
    retry: Option<(u32, u32)>,
    exhausted: PendingOutcome,
) -> CandidatePolicy {
    let section = SectionSpec {
        reset_wait_max_s,
        retry,
        exhausted,
    };
    pipeline::build_policy(section, section)
}

/// An agent of `kind` whose program is the fake `script` in `fixtures/agents/`.
pub fn fake_agent(kind: AgentKind, script: &str) -> AgentSpec {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/agents")
        .join(script);
    AgentSpec {
        kind,
        program: Some(path.display().to_string()),
        args: Vec::new(),
        model: None,
        script: Vec::new(),
    }
}

/// The fake Claude Code agent with the default policy; prompts with
/// `scenario:hang` keep it running until it is killed.
pub fn fake_claude() -> CandidateInput {
    CandidateInput::new(
        "claude",
        fake_agent(AgentKind::ClaudeCode, "claude-code.sh"),
        pipeline::default_policy(),
    )
}

/// Asks for `action` on route `route_id` as seen at `expected_generation`.
pub async fn act_on(
    engine: &Engine,
    route_id: u32,
    action: ManualAction,
    expected_generation: u32,
) -> Result<RouteSnapshot, EngineError> {
    engine
        .act(ActionRequest {
            route_id,
            action,
            expected_generation,
        })
        .await
}
