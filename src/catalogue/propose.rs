//! A local rule proposed from one piece of evidence, for a person to edit.
//!
//! Only the sanitized message is read, so a secret in the raw output can
//! never reach a rule: the pattern is one line of it, escaped, with digit
//! runs generalised, and lines holding a `[redacted:…]` marker are skipped
//! when another line is there.

use serde::{Deserialize, Serialize};

use super::schema::{MatcherSpec, RuleSpec};
use crate::classification::{Confidence, SemanticCode};
use crate::evidence::{Evidence, Provider};

/// Priority of a proposed rule: the band of tool-specific texts.
pub const PROPOSED_PRIORITY: u16 = 78;
/// Longest piece of a line taken into a proposed pattern, in characters.
const LINE_CHARS: usize = 80;

/// An editable local rule: what a person sets; the rest follows from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct RuleDraft {
    pub id: String,
    pub description: String,
    /// Empty means every provider.
    pub providers: Vec<Provider>,
    pub code: SemanticCode,
    pub priority: u16,
    /// Regex matched against the sanitized message.
    pub pattern: String,
    /// The built-in rule this one replaces, if any.
    pub overrides: Option<String>,
}

impl RuleDraft {
    /// The rule as written in the local file: confidence medium, the scope
    /// that fits its code, `reviewed` as given.
    pub fn to_spec(&self, reviewed: bool) -> RuleSpec {
        let providers = if self.providers.is_empty() {
            vec!["any".to_owned()]
        } else {
            self.providers
                .iter()
                .map(|p| p.as_str().to_owned())
                .collect()
        };
        RuleSpec {
            id: self.id.trim().to_owned(),
            description: self.description.trim().to_owned(),
            priority: i64::from(self.priority),
            providers,
            code: self.code.as_str().to_owned(),
            confidence: Confidence::Medium,
            scope: self.code.scope(),
            role: Default::default(),
            timing: Vec::new(),
            overrides: self.overrides.clone().filter(|o| !o.trim().is_empty()),
            reviewed: Some(reviewed),
            matchers: vec![MatcherSpec {
                text: Some(self.pattern.clone()),
                ..MatcherSpec::default()
            }],
        }
    }
}

/// A draft for `evidence`; `taken` tells which ids already exist.
pub fn propose(evidence: &Evidence, taken: impl Fn(&str) -> bool) -> RuleDraft {
    let line = chosen_line(&evidence.message);
    let provider = evidence.provider.as_str().replace('-', "_");
    let base = format!("local.{provider}.{}", slug(line));
    let id = (1..)
        .map(|n| format!("{base}.v{n}"))
        .find(|id| !taken(id))
        .expect("some version is free");
    RuleDraft {
        id,
        description: format!("{} reports: {}", evidence.provider.words(), line.trim()),
        providers: vec![evidence.provider],
        // `unknown` is no rule's code: the person is asked to choose one.
        code: code_basis(evidence).map_or(SemanticCode::Unknown, |(code, _)| code),
        priority: PROPOSED_PRIORITY,
        pattern: pattern_of(line),
        overrides: None,
    }
}

/// The code a proposed rule starts from and what in the evidence points to
/// it: the HTTP status first (structured evidence), then words of the
/// failure families the codes name. `None` when nothing does: a guess
/// would make a hard failure transient (or the reverse), so the person is
/// asked to choose.
pub fn code_basis(evidence: &Evidence) -> Option<(SemanticCode, String)> {
    use SemanticCode::*;
    let by_status = evidence.http_status.and_then(|status| match status {
        401 => Some(AuthInvalid),
        402 => Some(CreditBalanceLow),
        403 => Some(AccountForbidden),
        404 => Some(ModelNotFound),
        408 | 504 => Some(NetworkTimeout),
        429 => Some(RateLimited),
        500 => Some(ProviderInternalError),
        502 => Some(GatewayError),
        503 => Some(ProviderUnavailable),
        529 => Some(ProviderOverloaded),
        _ => None,
    });
    by_status
        .map(|code| {
            (
                code,
                format!("HTTP status {}", evidence.http_status.unwrap_or(0)),
            )
        })
        .or_else(|| text_basis(&evidence.message))
}

/// Words that name a failure family, most specific first.
const TEXT_CUES: &[(&str, SemanticCode, &str)] = &[
    (
        "usage limit",
        SemanticCode::UsageLimitReached,
        "it mentions a usage limit",
    ),
    ("quota", SemanticCode::QuotaExhausted, "it mentions a quota"),
    (
        "credit",
        SemanticCode::CreditBalanceLow,
        "it mentions credits",
    ),
    (
        "billing",
        SemanticCode::CreditBalanceLow,
        "it mentions billing",
    ),
    (
        "rate limit",
        SemanticCode::RateLimited,
        "it mentions a rate limit",
    ),
    (
        "too many requests",
        SemanticCode::RateLimited,
        "it says too many requests",
    ),
    (
        "overloaded",
        SemanticCode::ProviderOverloaded,
        "it says overloaded",
    ),
    (
        "api key",
        SemanticCode::AuthInvalid,
        "it mentions an API key",
    ),
    (
        "unauthorized",
        SemanticCode::AuthInvalid,
        "it says unauthorized",
    ),
    (
        "timed out",
        SemanticCode::NetworkTimeout,
        "it says timed out",
    ),
    (
        "connection reset",
        SemanticCode::NetworkReset,
        "it says the connection was reset",
    ),
    (
        "econnreset",
        SemanticCode::NetworkReset,
        "it says the connection was reset",
    ),
];

fn text_basis(message: &str) -> Option<(SemanticCode, String)> {
    let lower = message.to_lowercase();
    TEXT_CUES
        .iter()
        .find(|(cue, _, _)| lower.contains(cue))
        .map(|(_, code, why)| (*code, (*why).to_string()))
}

/// The first non-blank line without a redaction marker (or the first
/// non-blank line), cut to [`LINE_CHARS`] at a word end.
fn chosen_line(message: &str) -> &str {
    let lines = || message.lines().map(str::trim).filter(|l| !l.is_empty());
    let line = lines()
        .find(|l| !l.contains("[redacted"))
        .or_else(|| lines().next())
        .unwrap_or("");
    match line.char_indices().nth(LINE_CHARS) {
        None => line,
        Some((cut, _)) => {
            let head = &line[..cut];
            head.rfind(' ').map_or(head, |space| &head[..space])
        }
    }
}

/// The line as a literal pattern, with each run of digits as `\d+`.
fn pattern_of(line: &str) -> String {
    let mut pattern = String::new();
    let mut literal = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            while chars.next_if(char::is_ascii_digit).is_some() {}
            pattern.push_str(&regex::escape(&literal));
            literal.clear();
            pattern.push_str(r"\d+");
        } else {
            literal.push(c);
        }
    }
    pattern.push_str(&regex::escape(&literal));
    pattern
}

/// Up to three lowercase words of the line, joined by `_`.
fn slug(line: &str) -> String {
    let words: Vec<String> = line
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.len() > 2 && !w.bytes().all(|b| b.is_ascii_digit()))
        .take(3)
        .map(str::to_ascii_lowercase)
        .collect();
    if words.is_empty() {
        "error".to_owned()
    } else {
        words.join("_")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::RawEvidence;

    fn evidence(provider: Provider, message: &str) -> Evidence {
        Evidence::from_raw(RawEvidence::new(
            provider,
            message,
            chrono::DateTime::UNIX_EPOCH,
        ))
    }

    #[test]
    fn a_proposal_is_a_literal_line_with_digits_generalised() {
        let draft = propose(
            &evidence(
                Provider::Codex,
                "\nflux capacitor (unit 42) out of sync\nmore\n",
            ),
            |_| false,
        );
        assert_eq!(draft.pattern, r"flux capacitor \(unit \d+\) out of sync");
        assert_eq!(draft.id, "local.codex.flux_capacitor_unit.v1");
        assert_eq!(draft.providers, [Provider::Codex]);
        assert_eq!(
            draft.description, "Codex CLI reports: flux capacitor (unit 42) out of sync",
            "the description names the provider in words"
        );
        let spec = draft.to_spec(false);
        assert_eq!(
            spec.confidence,
            Confidence::Medium,
            "new rules start medium"
        );
        assert_eq!(spec.reviewed, Some(false));
    }

    #[test]
    fn the_code_comes_from_the_status_or_the_failure_words_and_is_asked_for_otherwise() {
        let mut limited = evidence(Provider::Generic, "gizmo says no");
        limited.http_status = Some(429);
        assert_eq!(
            code_basis(&limited),
            Some((SemanticCode::RateLimited, "HTTP status 429".into()))
        );
        let quota = evidence(Provider::Generic, "Your monthly Quota is used up");
        assert_eq!(code_basis(&quota).unwrap().0, SemanticCode::QuotaExhausted);
        assert_eq!(
            SemanticCode::QuotaExhausted.class(),
            crate::classification::Class::Hard,
            "a quota is not proposed as a transient failure"
        );
        let unknown = evidence(Provider::Generic, "the flux capacitor is out of sync");
        assert_eq!(code_basis(&unknown), None);
        assert_eq!(
            propose(&unknown, |_| false).code,
            SemanticCode::Unknown,
            "no guess: the person chooses"
        );
    }

    #[test]
    fn a_taken_id_gets_the_next_version() {
        let draft = propose(&evidence(Provider::ClaudeCode, "gizmo jammed"), |id| {
            id == "local.claude_code.gizmo_jammed.v1"
        });
        assert_eq!(draft.id, "local.claude_code.gizmo_jammed.v2");
    }

    #[test]
    fn a_planted_key_never_reaches_the_proposal() {
        let key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH";
        let draft = propose(
            &evidence(
                Provider::Generic,
                &format!("gateway refused key {key} with wobble"),
            ),
            |_| false,
        );
        let text = toml::to_string(&draft.to_spec(true)).unwrap();
        assert!(!text.contains("abcdefghijklmnop"), "{text}");
    }

    #[test]
    fn every_code_gets_a_scope_the_schema_accepts() {
        for code in SemanticCode::ALL {
            if code == SemanticCode::Unknown {
                continue; // no rule may assign unknown
            }
            let mut draft = propose(&evidence(Provider::Generic, "gizmo jammed hard"), |_| false);
            draft.code = code;
            let local =
                crate::catalogue::local::LocalFile::default().with_rule(draft.to_spec(true));
            let merged = local.merge(crate::catalogue::builtin());
            assert!(merged.is_ok(), "{code:?}: {:?}", merged.err());
        }
    }
}
