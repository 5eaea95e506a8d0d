//! What an account is called where a person reads about it: the name the
//! Accounts tab gives it (`Claude Code (~/.claude-work)`, `work`), never its
//! derived id. The engine works the names out from the saved candidates;
//! the texts that speak of accounts take them from here. Pure: no IO.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::AccountId;

/// Accounts by name, for the texts that speak of them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccountNames {
    names: BTreeMap<AccountId, String>,
    /// Every account by its id: the words stored with a route, which must
    /// read back the same whatever the candidates are called later.
    ids: bool,
}

impl AccountNames {
    pub fn new(names: BTreeMap<AccountId, String>) -> AccountNames {
        AccountNames { names, ids: false }
    }

    /// Every account by its id, as texts stored in the database have it.
    pub fn ids() -> AccountNames {
        AccountNames {
            names: BTreeMap::new(),
            ids: true,
        }
    }

    /// `id`'s name; one it was not given is named as no saved candidate
    /// knows it (see [`unknown_name`]).
    pub fn of(&self, id: &AccountId) -> Cow<'_, str> {
        match self.names.get(id) {
            _ if self.ids => Cow::Owned(id.to_string()),
            Some(name) => Cow::Borrowed(name),
            None => Cow::Owned(unknown_name(id)),
        }
    }
}

/// An account no saved candidate runs as: a label as it is, a derived id as
/// its kind and the start of its hash (`Claude Code (#3f9a1c)`).
pub fn unknown_name(id: &AccountId) -> String {
    if id.is_label() {
        return id.to_string();
    }
    let (slug, hash) = id.as_str().split_once('#').unwrap_or((id.as_str(), ""));
    let label = crate::agent::AgentKind::from_slug(slug).map_or(slug, |k| k.descriptor().label);
    format!("{label} (#{})", &hash[..hash.len().min(6)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_account_reads_as_its_name_else_as_its_kind_and_hash_and_stored_words_keep_the_id() {
        let kind = crate::agent::AgentKind::ALL[0];
        let derived = AccountId::parse(&format!("{}#3f9a1c2b7d0e", kind.slug())).unwrap();
        let work = AccountId::parse("work").unwrap();
        let named = AccountNames::new(BTreeMap::from([(derived.clone(), "Sim (~/.sim)".into())]));
        assert_eq!(named.of(&derived), "Sim (~/.sim)");
        assert_eq!(named.of(&work), "work", "a label is its own name");
        let label = kind.descriptor().label;
        assert_eq!(
            AccountNames::default().of(&derived),
            format!("{label} (#3f9a1c)"),
            "an account no candidate runs as any more still reads as words, not its id"
        );
        assert_eq!(
            AccountNames::ids().of(&derived),
            derived.as_str(),
            "stored words keep the id"
        );
    }
}
