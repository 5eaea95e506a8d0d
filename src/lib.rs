//! Recourse engine: classifies agent/provider failures, applies per-candidate
//! recovery policy, and owns durable route state.
//!
//! Layers, lowest first; a layer never imports one above it, which
//! `tests/it/layers.rs` enforces (see `docs/architecture.md`):
//! the domain (`account`, `agent`, `profile`, `route`, `clock`, `controls`, `evidence`,
//! `classification`, `catalogue`, `timing`, `safety`, `policy`, `evaluator`,
//! `simulation`), then `store` (with `keyring`), then `runner` (with `scheduler`), then
//! `engine`. The pure domain modules take time as an argument and do no IO.

pub mod account;
pub mod agent;
pub mod amount;
mod ascii_regex;
pub mod catalogue;
pub mod classification;
pub mod clock;
pub mod controls;
pub mod engine;
pub mod evaluator;
pub mod evidence;
pub mod keyring;
pub mod policy;
pub mod profile;
pub mod route;
pub mod runner;
pub mod safety;
pub mod scheduler;
pub mod simulation;
pub mod store;
pub mod timing;
