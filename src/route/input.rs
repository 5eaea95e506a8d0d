//! What an attempt sends its agent: the route's prompt in a fresh session
//! (every attempt before continuation existed), the last attempt's own
//! session resumed with a continuation message, or the prompt with a
//! continuation package for the next candidate.

use serde::{Deserialize, Serialize};

/// What an attempt sends; stored with the attempt (migration 0010) unless
/// it is the plain prompt.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AttemptInput {
    /// The route's prompt, in a fresh session.
    #[default]
    Prompt,
    /// Resumes the CLI session attempt `of_attempt` ran in and sends
    /// `message` in it; the original prompt is not sent again.
    Continue {
        of_attempt: u32,
        session_id: String,
        message: String,
        /// Started by the candidate's automatic-continuation policy, not a person.
        automatic: bool,
    },
    /// A fresh session on the next candidate: the route's prompt followed
    /// by `package`, what attempt `from_attempt` said and did, headed as
    /// reference data.
    Handover { from_attempt: u32, package: String },
}

impl AttemptInput {
    /// The history's words for it: `continues attempt 2 (session …)`;
    /// `None` for the plain prompt.
    pub fn describe(&self) -> Option<String> {
        match self {
            AttemptInput::Prompt => None,
            AttemptInput::Continue {
                of_attempt,
                session_id,
                automatic,
                ..
            } => Some(format!(
                "{} attempt {of_attempt} (session {session_id})",
                if *automatic {
                    "continues automatically"
                } else {
                    "continues"
                }
            )),
            AttemptInput::Handover { from_attempt, .. } => Some(format!(
                "handed over from attempt {from_attempt}, with its context"
            )),
        }
    }

    /// The prompt an attempt launched with this input sends, given the
    /// route's: the prompt itself, or followed by the package.
    pub fn prompt(&self, route_prompt: &str) -> String {
        match self {
            AttemptInput::Handover { package, .. } => format!("{route_prompt}\n\n{package}"),
            AttemptInput::Prompt | AttemptInput::Continue { .. } => route_prompt.to_string(),
        }
    }
}

/// What a continuation asks of the agent when neither the candidate nor the
/// person gave their own words.
pub const DEFAULT_CONTINUE_MESSAGE: &str = "Continue the task where you stopped. Your previous \
    turn was cut off by a provider error. First check the current state of the working \
    directory and of anything you changed, and do not repeat an action that already took \
    effect; then finish the task.";

/// What a continuation of `agent`'s session sends: its own message, else
/// the default one.
pub fn continue_message(agent: &crate::agent::AgentSpec) -> String {
    agent
        .continue_message
        .clone()
        .unwrap_or_else(|| DEFAULT_CONTINUE_MESSAGE.to_string())
}

/// Longest continuation message, in bytes.
pub const MAX_CONTINUE_MESSAGE: usize = 4096;

/// Why a continuation message cannot be sent, or `None`.
pub fn continue_message_problem(message: &str) -> Option<String> {
    if message.trim().is_empty() {
        return Some("the continuation message is empty".to_string());
    }
    if message.len() > MAX_CONTINUE_MESSAGE {
        return Some(format!(
            "the continuation message is at most {MAX_CONTINUE_MESSAGE} bytes ({} bytes is \
             too long)",
            message.len()
        ));
    }
    if message.contains('\0') {
        return Some("the continuation message holds a NUL byte".to_string());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handover_prompt_is_the_task_then_the_package() {
        let input = AttemptInput::Handover {
            from_attempt: 1,
            package: "PACKAGE".into(),
        };
        assert_eq!(input.prompt("Fix it."), "Fix it.\n\nPACKAGE");
        assert_eq!(
            AttemptInput::Prompt.prompt("Fix it."),
            "Fix it.",
            "a fresh attempt sends the prompt unchanged"
        );
    }

    #[test]
    fn a_continuation_message_must_be_sendable() {
        assert_eq!(continue_message_problem(DEFAULT_CONTINUE_MESSAGE), None);
        assert_eq!(
            continue_message_problem("  "),
            Some("the continuation message is empty".into())
        );
        assert_eq!(
            continue_message_problem(&"x".repeat(5000)),
            Some("the continuation message is at most 4096 bytes (5000 bytes is too long)".into())
        );
        assert_eq!(
            continue_message_problem("a\0b"),
            Some("the continuation message holds a NUL byte".into())
        );
    }
}
