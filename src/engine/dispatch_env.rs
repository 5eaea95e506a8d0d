//! The environment of a dispatch. A route keeps which `env` variables each
//! candidate set, never their values (`store::routes`, migration 0010); a
//! dispatch reads the values from the candidate in its profile as it is
//! now, so a rotated key is used at once and a removed one is gone from
//! the file. A variable the profile no longer sets fails the dispatch,
//! naming it, rather than running the agent without it (as another account,
//! say, or without its proxy).

use super::saved::Saved;
use crate::agent::AgentSpec;
use crate::route::RouteRow;
use crate::store::Store;

/// The agent of candidate `index` of `row` with its variables' values read
/// from its profile (through `saved`, from `store`), or why it cannot start.
pub(super) fn agent_at_dispatch(
    store: &Store,
    saved: &Saved,
    row: &RouteRow,
    index: usize,
) -> (AgentSpec, Option<String>) {
    let candidate = &row.candidates[index];
    let mut agent = candidate.agent.clone();
    if agent.env.is_empty() {
        return (agent, None);
    }
    let current = match saved.candidate(store, candidate.id) {
        Ok(found) => found,
        Err(e) => {
            let why = format!("the values of its variables cannot be read from profile: {e}");
            return (agent, Some(why));
        }
    };
    let Some(current) = current else {
        let names: Vec<&str> = agent.env.keys().map(String::as_str).collect();
        let why = format!(
            "candidate {:?} is no longer in profile {:?}, so the values of the variables it set \
             ({}) cannot be read; skip to the next candidate or start a new route",
            candidate.name,
            row.profile_name,
            names.join(", ")
        );
        return (agent, Some(why));
    };
    let mut missing = Vec::new();
    for (name, value) in &mut agent.env {
        match current.agent.env.get(name) {
            Some(now) => value.clone_from(now),
            None => missing.push(name.as_str()),
        }
    }
    if missing.is_empty() {
        return (agent, None);
    }
    let (these, are) = if missing.len() == 1 {
        ("variable", "is")
    } else {
        ("variables", "are")
    };
    let why = format!(
        "the {these} {} {are} no longer set on candidate {:?} of profile {:?}; set {} again, \
         or skip to the next candidate",
        missing.join(", "),
        current.name,
        row.profile_name,
        if missing.len() == 1 { "it" } else { "them" }
    );
    (agent, Some(why))
}
