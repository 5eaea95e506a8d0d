//! What a derived account is called where a person reads it (the Accounts
//! tab's heading, the desktop notification, the CLI): apart from the views,
//! so the naming has one place and its own tests.

use std::collections::BTreeSet;

use crate::account::AccountId;
use crate::agent::AgentKind;
use crate::store::accounts::AccountCandidate;

/// The config folders of the candidates that run as `id`, each once.
fn config_dirs(candidates: &[AccountCandidate], id: &AccountId) -> Vec<String> {
    let dirs: BTreeSet<String> = candidates
        .iter()
        .filter(|c| c.account == *id)
        .filter_map(|c| c.agent.config_dir.clone())
        .collect();
    dirs.into_iter().collect()
}

/// The kind of a derived account: its candidates', else the one its id
/// starts with.
pub(super) fn kind_of(id: &AccountId, kinds: &BTreeSet<AgentKind>) -> Option<AgentKind> {
    let slug = id
        .as_str()
        .split_once('#')
        .map_or(id.as_str(), |(slug, _)| slug);
    kinds
        .iter()
        .next()
        .copied()
        .or_else(|| AgentKind::from_slug(slug))
}

/// A label as it is; a derived account in words a person recognises (the
/// Accounts tab's heading and the desktop notification say the same): its
/// kind with its config dir, else with the candidate that runs as it (that
/// candidate's name alone when it is the kind's own label). The start of its
/// hash only when no saved candidate runs as it any more.
pub(super) fn name_of(
    id: &AccountId,
    kinds: &BTreeSet<AgentKind>,
    candidates: &[AccountCandidate],
) -> String {
    if id.is_label() {
        return id.to_string();
    }
    let slug = id
        .as_str()
        .split_once('#')
        .map_or(id.as_str(), |(slug, _)| slug);
    let label = kind_of(id, kinds).map_or(slug, |k| k.descriptor().label);
    let names: BTreeSet<&str> = candidates
        .iter()
        .filter(|c| c.account == *id)
        .map(|c| c.candidate_name.as_str())
        .collect();
    match (config_dirs(candidates, id).as_slice(), names.len()) {
        ([dir], _) => format!("{label} ({dir})"),
        (_, 0) => crate::account::unknown_name(id),
        (_, n) => {
            let first = names.first().copied().unwrap_or_default();
            // A candidate named after its kind names the account alone:
            // never "Any command account of “Any command”".
            let of = if first.eq_ignore_ascii_case(label) {
                first.to_string()
            } else {
                format!("{label} account of “{first}”")
            };
            match n {
                1 => of,
                n => format!("{of} and {} more", n - 1),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::AgentSpec;

    fn runs_as(account: &AccountId, name: &str) -> AccountCandidate {
        AccountCandidate {
            account: account.clone(),
            profile_name: "Demo".into(),
            candidate_name: name.into(),
            agent: AgentSpec::simulated(Vec::new()),
        }
    }

    #[test]
    fn a_derived_account_is_named_by_its_kind_and_the_candidate_that_runs_as_it() {
        let spec = AgentSpec::simulated(Vec::new());
        let id =
            crate::account::derive_from_spec(&spec, &crate::account::AccountKey::new(vec![7; 32]));
        let kind = spec.kind.descriptor().label;
        let kinds = BTreeSet::from([spec.kind]);
        let one = [runs_as(&id, "fast")];
        assert_eq!(
            name_of(&id, &kinds, &one),
            format!("{kind} account of “fast”"),
            "a person recognises the candidate, not a hash"
        );
        let two = [
            runs_as(&id, "fast"),
            runs_as(&id, "slow"),
            runs_as(&id, "fast"),
        ];
        assert_eq!(
            name_of(&id, &kinds, &two),
            format!("{kind} account of “fast” and 1 more"),
            "a name saved in two profiles counts once"
        );
        let named_as_kind = [runs_as(&id, &kind.to_lowercase())];
        assert_eq!(
            name_of(&id, &kinds, &named_as_kind),
            kind.to_lowercase(),
            "a candidate named after its kind names the account alone, without saying the kind twice"
        );
        let hash = &id.as_str()[id.as_str().find('#').unwrap() + 1..][..6];
        assert_eq!(
            name_of(&id, &kinds, &[]),
            format!("{kind} (#{hash})"),
            "no saved candidate runs as it any more: the start of its hash tells it apart"
        );
    }
}
