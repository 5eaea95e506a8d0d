//! Recourse engine: classifies agent/provider failures, applies per-candidate
//! recovery policy, and owns durable route state.
//!
//! Pure domain modules (`evidence`, `classification`, `catalogue`, `timing`,
//! `safety`, `policy`, `evaluator`) take time as an argument and do no IO.

pub mod catalogue;
pub mod classification;
pub mod evidence;
pub mod safety;
pub mod timing;
