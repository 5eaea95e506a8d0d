//! TEMPORARY stand-ins for the evidence and catalogue branches, shaped
//! after their announced names. Deleted when they merge.

use chrono::DateTime;

use crate::classification::{Classification, Confidence, Scope, SemanticCode};
use crate::evidence::{Evidence, RawEvidence};

pub fn from_raw(raw: RawEvidence) -> Evidence {
    let text = String::from_utf8_lossy(&raw.message).to_string();
    let re = regex::Regex::new(r"(sk-[A-Za-z0-9_\-]{8,}|Bearer [A-Za-z0-9._\-]+)").unwrap();
    let message = re.replace_all(&text, "[redacted]").to_string();
    Evidence {
        provider: raw.provider,
        message,
        truncated: false,
        phase: raw.phase,
        http_status: raw.http_status,
        headers: raw.headers,
        error_type: raw.error_type,
        exit_code: raw.exit_code,
        occurred_at: raw.occurred_at,
        correlation: raw.correlation,
    }
}

pub fn classify(e: &Evidence, _tz: chrono_tz::Tz) -> Classification {
    let (code, rule) = if e.http_status == Some(529) || e.message.contains("overloaded") {
        (SemanticCode::ProviderOverloaded, Some("shim.overloaded.v1"))
    } else if e.message.contains("usage limit reached") {
        (SemanticCode::UsageLimitReached, Some("shim.usage.v1"))
    } else if e.message.to_lowercase().contains("connection reset") {
        (SemanticCode::NetworkReset, Some("shim.reset.v1"))
    } else {
        (SemanticCode::Unknown, None)
    };
    let reset_at = e
        .message
        .split('|')
        .nth(1)
        .and_then(|s| s.trim().parse::<i64>().ok())
        .and_then(|s| DateTime::from_timestamp(s, 0));
    Classification {
        code,
        class: code.class(),
        confidence: Confidence::High,
        scope: Scope::Provider,
        rule_id: rule.map(str::to_string),
        catalogue_version: "shim-0".into(),
        retry_after_s: None,
        reset_at,
        matched: None,
        explanation: "shim".into(),
    }
}

pub fn machine_local_tz() -> chrono_tz::Tz {
    chrono_tz::UTC
}
