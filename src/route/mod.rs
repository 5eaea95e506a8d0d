//! Routes in the domain: their states and rows, the pure state machine that
//! plans every change ([`machine`]), and the table that says which event and
//! action is valid in which state ([`transitions`]).
//!
//! Nothing here does IO or reads a clock: `now` is an argument, and the
//! engine commits what [`machine`] plans.

mod input;
pub mod machine;
mod manual;
mod row;
mod state;
pub mod transitions;

pub use input::{
    continue_message_problem, AttemptInput, DEFAULT_CONTINUE_MESSAGE, MAX_CONTINUE_MESSAGE,
};
pub use manual::{ActionRecord, Actor, Ask, LedTo, RepeatRisk};
pub use row::{
    AttemptRecord, AttemptResultRecord, Decided, HoldRecord, NewRoute, ProbeClaim, ProbeEnd,
    QueueReason, Queued, RouteRecord, RouteRow, TransitionWrite,
};
pub use state::{AttemptOutcome, HoldReason, Interruption, ManualAction, RouteState};
