//! The integration tests, one binary (one link instead of one per file).
//! Each module is one suite; `cargo test --test it <module>::` runs one, e.g.
//! `cargo test --test it catalogue_fixtures::`.

mod common;

mod accounts_processes;
mod adversarial_evidence;
mod agent_lifetime;
mod agents_replay;
mod bad_database;
mod catalogue_fixtures;
mod catalogue_overlay;
mod catalogue_robustness;
mod cli_accounts;
mod cli_bad_input;
mod cli_catalogue;
mod cli_classify;
mod cli_policy;
mod cli_profile;
mod cli_terminal;
mod corruption_trial;
mod db_health;
mod disk_full;
mod engine_accounts;
mod engine_actions;
mod engine_adapters;
mod engine_cli;
mod engine_continuation;
mod engine_delete_held;
mod engine_flow;
mod engine_housekeeping;
mod engine_locks;
mod engine_pause;
mod engine_profiles;
mod engine_race;
mod engine_recover;
mod engine_redaction;
mod engine_reset_zone;
mod engine_restart;
mod engine_route_list;
mod engine_soak;
mod engine_timeouts;
mod engine_transcripts;
mod engine_unclassified;
mod evaluator;
mod fuzz_regressions;
mod keyring;
mod layers;
mod live_clis;
mod live_continuation;
mod private_files;
mod profile_documents;
mod route_env;
mod runner;
mod shape;
