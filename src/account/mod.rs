//! Accounts: what a provider limits. Every candidate runs as one account,
//! derived from its kind, its config dir and a keyed hash of its credential
//! and base-URL variables (the facts are in its kind's descriptor), or
//! named by an `account` label in its agent spec, which shares one account
//! between candidates or separates them.
//!
//! The hash is HMAC-SHA-256 with a random key made once per database (kept
//! there, never exported), so an account id reveals nothing of the
//! credentials and cannot be matched with another install's. Credential
//! values are read only to hash them; neither they nor the key are stored
//! with the account. Profiles as files carry the label, never the hash.
//!
//! What a provider said about an account — its limit marks, which routes
//! consult before any dispatch — is in [`mark`]. Pure: no IO.

mod hmac;
pub mod mark;
mod names;

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::agent::{AgentSpec, Launch};

pub use mark::{
    mark_for, standing, AccountState, LimitKind, Mark, MarkState, Probe, Standing, StoredMark,
};
pub use names::{unknown_name, AccountNames};

/// Longest account label, in characters.
pub const MAX_LABEL_CHARS: usize = 64;

/// What separates a derived account's kind from its hash; labels may not
/// hold it, so a label never names a derived account.
const DERIVED: char = '#';

/// An account: a label (`work`) or a derived id (`claude-code#3f9a1c2b7d0e`).
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, specta::Type,
)]
#[serde(transparent)]
pub struct AccountId(String);

impl AccountId {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// An id as stored or typed; `None` when it is neither a valid label nor
    /// a derived id.
    pub fn parse(text: &str) -> Option<AccountId> {
        let text = text.trim();
        match text.split_once(DERIVED) {
            Some((slug, hash)) => (crate::agent::AgentKind::from_slug(slug).is_some()
                && hash.len() == HASH_HEX
                && hash.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| AccountId(text.to_string())),
            None => label_problem(text)
                .is_none()
                .then(|| AccountId(crate::profile::names::normalize(text))),
        }
    }

    /// Named by a label rather than derived.
    pub fn is_label(&self) -> bool {
        !self.0.contains(DERIVED)
    }
}

impl fmt::Display for AccountId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The install's random key the derived ids are hashed with. Its `Debug`
/// shows nothing of it.
#[derive(Clone, PartialEq, Eq)]
pub struct AccountKey(Vec<u8>);

impl AccountKey {
    pub fn new(bytes: Vec<u8>) -> AccountKey {
        AccountKey(bytes)
    }
}

impl fmt::Debug for AccountKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AccountKey(…)")
    }
}

/// Hexadecimal digits of the hash kept in a derived id (48 bits).
const HASH_HEX: usize = 12;

/// Why `label` cannot name an account, or `None` when it can.
pub fn label_problem(label: &str) -> Option<String> {
    let label = label.trim();
    if label.is_empty() {
        return Some("an account label cannot be empty; leave it out to derive the account".into());
    }
    if let Some((c, at)) = crate::controls::first_control(label) {
        return Some(format!(
            "an account label cannot hold control characters (found U+{:04X} at character {at})",
            u32::from(c)
        ));
    }
    if label.contains(DERIVED) {
        return Some(format!(
            "an account label cannot hold `{DERIVED}`, which marks a derived account"
        ));
    }
    if label.chars().count() > MAX_LABEL_CHARS {
        return Some(format!(
            "an account label is at most {MAX_LABEL_CHARS} characters"
        ));
    }
    None
}

/// The account `spec` runs as. `value_of` gives each `env` variable's
/// value as the agent would get it (a keyring reference read back), so two
/// candidates with the same key are one account wherever each keeps it.
pub fn derive(
    spec: &AgentSpec,
    key: &AccountKey,
    value_of: impl Fn(&str) -> Option<String>,
) -> AccountId {
    if let Some(label) = spec
        .account
        .as_deref()
        .filter(|l| label_problem(l).is_none())
    {
        return AccountId(crate::profile::names::normalize(label));
    }
    let d = spec.kind.descriptor();
    let mut facts: BTreeMap<&str, String> = BTreeMap::new();
    for name in d.account.credentials.iter().chain(d.account.base_urls) {
        if let Some(value) = value_of(name) {
            facts.insert(name, value);
        }
    }
    let mut input = format!("recourse-account-v1\0{}\0", d.slug);
    if let (Some(dir), Some(_)) = (&spec.config_dir, d.config_dir_variable) {
        input += &format!("config_dir={}\0", dir.trim());
    }
    if d.default_program.is_none() && matches!(d.launch, Launch::Process { .. }) {
        // A command of one's own is its own provider.
        input += &format!("program={}\0", spec.program.as_deref().unwrap_or("").trim());
    }
    if matches!(d.launch, Launch::InProcess) {
        // Each scripted provider is its own account.
        let script = serde_json::to_string(&spec.script).expect("a script serializes");
        input += &format!("script={script}\0");
    }
    for (name, value) in facts {
        input += &format!("{name}={value}\0");
    }
    let hash = hmac::hmac_sha256(&key.0, input.as_bytes());
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    AccountId(format!("{}{DERIVED}{}", d.slug, &hex[..HASH_HEX]))
}

/// What a derived account of `kind` was worked out from, in words, for
/// someone who never set a label: the same facts [`derive`] hashes, named
/// (never their values). `candidates`: how many saved candidates run on it.
pub fn derivation_words(kind: crate::agent::AgentKind, candidates: usize) -> String {
    let d = kind.descriptor();
    let mut facts: Vec<&str> = Vec::new();
    if d.config_dir_variable.is_some() {
        facts.push("config folder");
    }
    if !d.account.credentials.is_empty() {
        facts.push("credentials");
    }
    if !d.account.base_urls.is_empty() {
        facts.push("endpoint");
    }
    match d.launch {
        Launch::InProcess => facts.push("script"),
        Launch::Process { .. } if d.default_program.is_none() => facts.push("program"),
        Launch::Process { .. } => {}
    }
    let whose = if candidates == 1 {
        "the candidate's"
    } else {
        "its candidates'"
    };
    let facts = match facts.as_slice() {
        [] => String::new(),
        [one] => format!(" ({one})"),
        [first @ .., last] => format!(" ({} and {last})", first.join(", ")),
    };
    format!(
        "Worked out from {whose} settings{facts}, as no account label is set: candidates \
         with the same ones share this account."
    )
}

/// [`derive`] from the spec's own `env` values.
pub fn derive_from_spec(spec: &AgentSpec, key: &AccountKey) -> AccountId {
    derive(spec, key, |name| spec.env.get(name).cloned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{AgentKind, SimStep};

    fn key(byte: u8) -> AccountKey {
        AccountKey::new(vec![byte; 32])
    }

    fn claude(env: &[(&str, &str)]) -> AgentSpec {
        let mut spec = AgentSpec::default_for(AgentKind::ClaudeCode);
        spec.env = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        spec
    }

    #[test]
    fn a_derived_account_says_what_it_was_worked_out_from_in_words() {
        // Read from the descriptors: each named fact is one `derive` hashes.
        for kind in AgentKind::ALL {
            let d = kind.descriptor();
            let words = derivation_words(kind, 1);
            assert!(
                words.starts_with("Worked out from the candidate's settings"),
                "{}: {words}",
                d.slug
            );
            assert!(!words.contains(d.slug), "no slug: {words}");
            assert_eq!(
                words.contains("config folder"),
                d.config_dir_variable.is_some(),
                "{}: the config folder is named when it counts",
                d.slug
            );
            assert_eq!(
                words.contains("credentials"),
                !d.account.credentials.is_empty(),
                "{}: credentials are named when they count",
                d.slug
            );
        }
        let with_everything = AgentKind::ALL
            .into_iter()
            .find(|k| {
                let d = k.descriptor();
                d.config_dir_variable.is_some() && !d.account.base_urls.is_empty()
            })
            .expect("a kind keyed by config folder, credentials and endpoint");
        assert_eq!(
            derivation_words(with_everything, 2),
            "Worked out from its candidates' settings (config folder, credentials and \
             endpoint), as no account label is set: candidates with the same ones share \
             this account."
        );
    }

    #[test]
    fn the_same_credentials_are_one_account_and_other_ones_another() {
        let a = derive_from_spec(&claude(&[("ANTHROPIC_API_KEY", "sk-ant-one")]), &key(1));
        let same = claude(&[
            ("ANTHROPIC_API_KEY", "sk-ant-one"),
            ("HTTPS_PROXY", "http://127.0.0.1:3128"),
        ]);
        assert_eq!(
            derive_from_spec(&same, &key(1)),
            a,
            "a variable that is no credential or endpoint does not change the account"
        );
        let other = claude(&[("ANTHROPIC_API_KEY", "sk-ant-two")]);
        assert_ne!(derive_from_spec(&other, &key(1)), a, "another key");
        let elsewhere = claude(&[
            ("ANTHROPIC_API_KEY", "sk-ant-one"),
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
        ]);
        assert_ne!(derive_from_spec(&elsewhere, &key(1)), a, "another endpoint");
        let mut dir = claude(&[("ANTHROPIC_API_KEY", "sk-ant-one")]);
        dir.config_dir = Some("~/.claude-work".into());
        assert_ne!(derive_from_spec(&dir, &key(1)), a, "another config dir");
        assert!(a.as_str().starts_with("claude-code#"), "{a}");
        assert!(!a.as_str().contains("sk-ant"), "no credential in the id");
    }

    #[test]
    fn another_install_key_gives_another_id_for_the_same_credentials() {
        let spec = claude(&[("ANTHROPIC_API_KEY", "sk-ant-one")]);
        assert_ne!(
            derive_from_spec(&spec, &key(1)),
            derive_from_spec(&spec, &key(2)),
            "without the key nobody can test a guessed credential against an id"
        );
    }

    #[test]
    fn a_label_names_the_account_across_kinds_and_credentials() {
        let mut a = claude(&[("ANTHROPIC_API_KEY", "sk-ant-one")]);
        a.account = Some("  work ".into());
        let mut b = AgentSpec::default_for(AgentKind::Opencode);
        b.account = Some("work".into());
        assert_eq!(derive_from_spec(&a, &key(1)).as_str(), "work");
        assert_eq!(derive_from_spec(&b, &key(1)), derive_from_spec(&a, &key(1)));
        assert!(derive_from_spec(&a, &key(1)).is_label());
    }

    #[test]
    fn each_simulated_script_is_its_own_account() {
        let one = AgentSpec::simulated(vec![SimStep::Succeed { after_ms: 1 }]);
        let two = AgentSpec::simulated(vec![SimStep::Overloaded { after_ms: 1 }]);
        assert_ne!(
            derive_from_spec(&one, &key(1)),
            derive_from_spec(&two, &key(1))
        );
    }

    #[test]
    fn labels_are_refused_with_why() {
        assert_eq!(label_problem("work"), None);
        for (label, why) in [
            ("  ", "cannot be empty"),
            ("a#b", "cannot hold `#`"),
            (
                "x\u{1b}]0;",
                "control characters (found U+001B at character 2)",
            ),
        ] {
            let found = label_problem(label).unwrap_or_default();
            assert!(found.contains(why), "{label:?}: {found}");
        }
        assert!(label_problem(&"x".repeat(65)).is_some(), "too long");
    }

    #[test]
    fn typed_ids_parse_as_labels_or_derived_ids() {
        assert_eq!(AccountId::parse(" work ").unwrap().as_str(), "work");
        assert!(AccountId::parse("claude-code#3f9a1c2b7d0e").is_some());
        assert!(AccountId::parse("claude-code#xyz").is_none(), "not a hash");
        assert!(
            AccountId::parse("nobody#3f9a1c2b7d0e").is_none(),
            "no such kind"
        );
    }
}
