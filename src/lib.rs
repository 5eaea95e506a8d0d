//! Recourse engine: classifies agent/provider failures, applies per-candidate
//! recovery policy, and owns durable route state.
//!
//! Pure domain modules (`evidence`, `classification`, `catalogue`, `timing`,
//! `safety`, `policy`, `evaluator`) take time as an argument and do no IO.

mod ascii_regex;
pub mod catalogue;
pub mod classification;
pub mod engine;
pub mod evaluator;
pub mod evidence;
pub mod policy;
pub mod runner;
pub mod safety;
pub mod scheduler;
pub mod simulation;
pub mod store;
pub mod timing;
