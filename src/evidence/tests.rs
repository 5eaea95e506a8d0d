use super::sanitize::{API_KEY, BLOB, COOKIE, EMAIL, JWT, PATH, SECRET, TOKEN};
use super::*;

use chrono::TimeZone;
use proptest::prelude::*;

/// Planted secrets: each must be absent from the sanitized output, and the
/// given marker present.
const PLANTED: &[(&str, &str)] = &[
    ("sk-ant-api03-AbCdEf0123456789_ghIJKLmnopQRstuVWxyz-0123456789abcdefABCDEF", API_KEY),
    ("sk-ant-oat01-Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0PpOoNnMmLlKk", API_KEY),
    ("sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-abcdEFGH", API_KEY),
    ("sk-svcacct-0123456789abcdefABCDEF0123", API_KEY),
    ("sk-0123456789abcdefABCDEF0123456789abcdefABCDEF01", API_KEY),
    ("AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", API_KEY),
    ("ghp_0123456789abcdefABCDEF0123456789abcd", API_KEY),
    ("gho_ABCDEFabcdef0123456789ABCDEFabcdef01", API_KEY),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", API_KEY),
    ("xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUv", API_KEY),
    ("AKIAIOSFODNN7EXAMPLE", API_KEY),
    ("hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", API_KEY),
    ("sk_live_51H0123456789abcdefABCDEF", API_KEY),
    ("ya29.a0AfH6SMBx0123456789abcdefABCDEF-_xyz", TOKEN),
    ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", JWT),
    ("alice.smith+work@example.co.uk", EMAIL),
    ("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", BLOB),
    ("dGhpcyBpcyBhIHNlY3JldCB2YWx1ZSAxMjM0NTY3ODkw/+==", BLOB),
];

/// (input, secret that must vanish, marker expected)
const CONTEXTUAL: &[(&str, &str, &str)] = &[
    (
        "Authorization: Bearer abc.DEF-ghi_jkl~mno",
        "abc.DEF-ghi_jkl~mno",
        "Authorization: Bearer [redacted:token]",
    ),
    (
        "authorization=Basic dXNlcjpwYXNzd29yZA==",
        "dXNlcjpwYXNzd29yZA==",
        "authorization=Basic [redacted:token]",
    ),
    ("proxy-authorization: opaqueValue", "opaqueValue", TOKEN),
    (
        "sent with bearer 0123456789abcdefXYZ",
        "0123456789abcdefXYZ",
        "bearer [redacted:token]",
    ),
    (
        r#"{"access_token": "tok-abc123", "expires_in": 3600}"#,
        "tok-abc123",
        r#""access_token": "[redacted:token]""#,
    ),
    (
        "refresh_token=rt.Secret-Value&grant_type=refresh",
        "rt.Secret-Value",
        "refresh_token=[redacted:token]",
    ),
    ("id_token: shortid", "shortid", TOKEN),
    (
        "api_key=hunter2hunter2",
        "hunter2hunter2",
        "api_key=[redacted:api_key]",
    ),
    (
        "x-api-key: custom-gateway-key-1",
        "custom-gateway-key-1",
        API_KEY,
    ),
    ("apiKey: 'abcdef'", "abcdef", API_KEY),
    (r#""password":"correct horse""#, "correct", SECRET),
    ("client_secret=GOCSPX-abcdef", "GOCSPX-abcdef", SECRET),
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG",
        "wJalrXUtnFEMI",
        SECRET,
    ),
    (
        "Cookie: session=abc123; theme=dark",
        "session=abc123",
        "Cookie: [redacted:cookie]",
    ),
    (
        "set-cookie: __cf_bm=hYY77LPW86IHCx; path=/; HttpOnly",
        "hYY77LPW86IHCx",
        COOKIE,
    ),
    (
        r#"{"set-cookie": "sid=xyz789", "server": "cloudflare"}"#,
        "sid=xyz789",
        r#""set-cookie": "[redacted:cookie]", "server""#,
    ),
    (
        "at /home/alice/projects/app/src/main.rs:10",
        "alice",
        "at [path]",
    ),
    (
        "file:///Users/kasnitski/.nvm/versions/node/cli.js:942:2624",
        "kasnitski",
        "file:///[path]",
    ),
    (
        "open /Users/bob/.claude/config.json failed",
        "bob",
        "open [path] failed",
    ),
    (
        r"EPERM: symlink 'C:\Users\elmur\.claude\projects\x.jsonl'",
        "elmur",
        "'[path]'",
    ),
    (r#"path: "C:\\Users\\BJKow\\AppData\\Local""#, "BJKow", PATH),
    (
        "uv_spawn '/c/Users/BJKow/.local/bin/claude.exe'",
        "BJKow",
        "'[path]'",
    ),
    ("cd /root/.config/secret-dir", "secret-dir", "cd [path]"),
    (
        "POST https://api.anthropic.com/v1/messages?beta=true failed",
        "v1/messages",
        "POST https://api.anthropic.com/[path] failed",
    ),
    (
        "see https://user:pw@proxy.internal:8443/a/b?token=1.",
        "user:pw",
        "https://proxy.internal:8443/[path].",
    ),
    (
        "(https://openai.com/chatgpt/pricing)",
        "chatgpt/pricing",
        "(https://openai.com/[path])",
    ),
];

#[test]
fn planted_secrets_never_survive_and_get_their_marker() {
    let mut failures = Vec::new();
    for (secret, marker) in PLANTED {
        let out = sanitize(&format!("error: upstream said {secret} (status 401)"));
        if out.contains(secret) || !out.contains(marker) || !out.contains("status 401") {
            failures.push(format!("{secret} -> {out}"));
        }
    }
    assert!(
        failures.is_empty(),
        "leaked or wrong marker:\n{}",
        failures.join("\n")
    );
}

#[test]
fn contextual_secrets_are_redacted_with_stable_output() {
    let mut failures = Vec::new();
    for (input, secret, expected) in CONTEXTUAL {
        let out = sanitize(input);
        if out.contains(secret) || !out.contains(expected) {
            failures.push(format!(
                "{input}\n   -> {out}\n   expected to contain {expected}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "failing cases:\n{}",
        failures.join("\n")
    );
}

#[test]
fn facts_the_catalogue_needs_survive_sanitizing() {
    let kept = [
        "Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
        "Claude AI usage limit reached|1749924000",
        "Your limit will reset at 5pm (Europe/Warsaw).",
        "resets 8:30pm (America/Argentina/ComodRivadavia)",
        "reset at 1pm (Etc/GMT+5)",
        "429 rate_limit_exceeded: You exceeded your current quota, insufficient_quota",
        "context_length_exceeded_because_the_prompt_was_far_too_long",
        "Try again in 3 days 1 hour 4 minutes.",
        "connect ECONNRESET 104.18.32.47:443",
        "see ~/.codex/config.toml",
        "org-AbCdEf123456789012345678 exceeded quota",
        "Basic authentication failed",
        "host bedrock-runtime.us-east-1.amazonaws.com unreachable",
        "https://api.anthropic.com/",
        "\"retryDelay\": \"38s\"",
        "/home directory missing",
    ];
    for text in kept {
        assert_eq!(sanitize(text), text, "must be unchanged");
    }
}

#[test]
fn url_keeps_scheme_and_host() {
    assert_eq!(
        sanitize("upstream https://generativelanguage.googleapis.com/v1beta/models/gemini:generate?key=AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
        "upstream https://generativelanguage.googleapis.com/[path]"
    );
}

#[test]
fn request_ids_may_be_redacted_but_error_text_stays() {
    let out = sanitize(
        r#"{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your account's rate limit."},"request_id":"req_011CV2S4jxpPs7x8XWqHUiM7"}"#,
    );
    assert!(out.contains("rate_limit_error"), "{out}");
    assert!(
        out.contains("would exceed your account's rate limit"),
        "{out}"
    );
}

#[test]
fn terminal_escapes_and_controls_are_stripped() {
    let raw = "\u{1b}[31;1mError\u{1b}[0m: \u{1b}]8;;https://x\u{7}link\u{1b}]8;;\u{1b}\\ done\r\nnext\rover\u{0}\u{7f}\u{9b}2Kend\ttab";
    assert_eq!(
        strip_terminal_escapes(raw),
        "Error: link done\nnext\noverend\ttab"
    );
}

#[test]
fn unterminated_escape_at_end_is_dropped() {
    assert_eq!(strip_terminal_escapes("ok\u{1b}[12;"), "ok");
    assert_eq!(strip_terminal_escapes("ok\u{1b}]0;title"), "ok");
    assert_eq!(strip_terminal_escapes("ok\u{1b}"), "ok");
}

fn raw(message: &[u8]) -> RawEvidence {
    RawEvidence {
        provider: Provider::ClaudeCode,
        message: message.to_vec(),
        phase: Some(Phase::Exit),
        http_status: Some(429),
        headers: BTreeMap::new(),
        error_type: None,
        exit_code: Some(1),
        occurred_at: Utc.with_ymd_and_hms(2025, 6, 14, 17, 56, 6).unwrap(),
        correlation: None,
    }
}

#[test]
fn from_raw_decodes_lossily_strips_and_sanitizes() {
    let mut bytes = b"\x1b[31mAPI Error\x1b[0m key sk-ant-api03-AbCdEf0123456789abcdef ".to_vec();
    bytes.extend_from_slice(&[0xff, 0xfe]);
    bytes.extend_from_slice(b" done");
    let evidence = Evidence::from_raw(raw(&bytes));
    assert_eq!(
        evidence.message,
        "API Error key [redacted:api_key] \u{fffd}\u{fffd} done"
    );
    assert!(!evidence.truncated, "short input is not truncated");
    assert_eq!(evidence.http_status, Some(429));
    assert_eq!(evidence.exit_code, Some(1));
}

#[test]
fn long_message_keeps_head_and_tail_within_the_bound() {
    let mut text = String::from("HEAD-MARKER ");
    text.push_str(&"lorem ipsum é ".repeat(2000));
    text.push_str("Claude AI usage limit reached|1749924000");
    let evidence = Evidence::from_raw(raw(text.as_bytes()));
    assert!(evidence.truncated);
    assert!(
        evidence.message.len() <= MAX_MESSAGE_BYTES,
        "len {}",
        evidence.message.len()
    );
    assert!(evidence.message.starts_with("HEAD-MARKER"), "head kept");
    assert!(
        evidence.message.ends_with("limit reached|1749924000"),
        "tail kept: errors sit at the end"
    );
    assert!(
        evidence.message.contains(OMITTED_MARKER_PREFIX),
        "cut is marked"
    );
}

#[test]
fn huge_raw_input_is_bounded_before_sanitizing_and_secrets_at_the_cut_do_not_leak() {
    let secret = "sk-ant-api03-CUTPOINTsecret0123456789abcdef";
    let mut text = "word ".repeat(RAW_HEAD_BYTES / 5 - 10);
    text.push_str(secret);
    text.push(' ');
    text.push_str(&"x".repeat(300_000));
    text.push(' ');
    text.push_str(secret);
    text.push_str(" overloaded_error");
    let evidence = Evidence::from_raw(raw(text.as_bytes()));
    assert!(evidence.truncated);
    assert!(evidence.message.len() <= MAX_MESSAGE_BYTES);
    assert!(
        !evidence.message.contains("CUTPOINT"),
        "{}",
        evidence.message
    );
    assert!(evidence
        .message
        .ends_with("[redacted:api_key] overloaded_error"));
}

#[test]
fn only_selected_headers_are_kept_lowercased_and_sanitized() {
    let mut input = raw(b"429");
    for (name, value) in [
        ("Retry-After", "30"),
        ("retry-after-ms", "30000"),
        ("x-should-retry", "true"),
        ("anthropic-ratelimit-requests-reset", "2025-06-14T18:00:00Z"),
        ("X-RateLimit-Reset-Tokens", "6m0s"),
        ("x-ratelimit-remaining-requests", "0"),
        ("x-ratelimit-limit-requests", "60"),
        ("set-cookie", "sid=abc"),
        (
            "authorization",
            "Bearer sk-ant-api03-AbCdEf0123456789abcdef",
        ),
        ("request-id", "req_011CV2S4jxpPs7x8XWqHUiM7"),
        (
            "anthropic-ratelimit-weird",
            "Bearer sk-ant-api03-AbCdEf0123456789abcdef",
        ),
    ] {
        input.headers.insert(name.to_owned(), value.to_owned());
    }
    let evidence = Evidence::from_raw(input);
    let names: Vec<&str> = evidence.headers.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "anthropic-ratelimit-requests-reset",
            "anthropic-ratelimit-weird",
            "retry-after",
            "retry-after-ms",
            "x-ratelimit-limit-requests",
            "x-ratelimit-remaining-requests",
            "x-ratelimit-reset-tokens",
            "x-should-retry",
        ]
    );
    assert_eq!(
        evidence.headers["anthropic-ratelimit-weird"],
        "Bearer [redacted:token]"
    );
    assert_eq!(evidence.headers["retry-after"], "30");
}

#[test]
fn header_values_and_error_type_are_bounded() {
    let mut input = raw(b"x");
    input
        .headers
        .insert("retry-after".into(), "9".repeat(10_000));
    input.error_type = Some(format!("rate_limit_error\u{1b}[0m\n{}", "é".repeat(1000)));
    let evidence = Evidence::from_raw(input);
    assert!(evidence.headers["retry-after"].len() <= MAX_FIELD_BYTES);
    let error_type = evidence.error_type.expect("kept");
    assert!(
        error_type.len() <= MAX_FIELD_BYTES,
        "len {}",
        error_type.len()
    );
    assert!(error_type.starts_with("rate_limit_error "), "{error_type}");
}

#[test]
fn too_many_headers_are_capped() {
    let mut input = raw(b"x");
    for i in 0..1000 {
        input
            .headers
            .insert(format!("anthropic-ratelimit-b{i:04}-reset"), "1".into());
    }
    input.headers.insert(
        format!("anthropic-ratelimit-{}", "a".repeat(5000)),
        "1".into(),
    );
    assert_eq!(Evidence::from_raw(input).headers.len(), MAX_HEADERS);
}

fn secret_strategy() -> impl Strategy<Value = String> {
    prop::sample::select(
        PLANTED
            .iter()
            .map(|(s, _)| (*s).to_owned())
            .collect::<Vec<_>>(),
    )
}

/// Random printable text with escapes; joined to a planted secret by a space.
fn filler() -> impl Strategy<Value = String> {
    "[ -~\\n\u{e9}\u{1b}]{0,80}"
}

/// Concatenations of fragments that sit on the edges of the patterns, so
/// rules interact (a marker next to a key name, a URL inside a cookie, …).
fn tricky_text() -> impl Strategy<Value = String> {
    let fragments = [
        "sk-",
        "ant-",
        "api03-",
        "proj-",
        "AIza",
        "ghp_",
        "xoxb-",
        "AKIA",
        "eyJ",
        ".",
        "api_key",
        "token",
        "access_token",
        "password",
        "secret",
        "=",
        ": ",
        "\"",
        "'",
        " ",
        "\n",
        "Bearer ",
        "Basic ",
        "Authorization",
        "Cookie",
        "set-cookie",
        "https://",
        "file://",
        "api.anthropic.com",
        "/v1/x",
        "?q=1",
        "/home/",
        "/Users/",
        "C:\\Users\\",
        "alice",
        "@",
        "example.com",
        "[redacted:token]",
        "[path]",
        "0123456789",
        "abcdefghijklmnop",
        "ABCDEFGHIJKLMNOP",
        "_-",
        "+/=",
        "Europe/Warsaw",
        "|1749924000",
        "]",
        "[",
        ")",
        "(",
        ",",
        ";",
        "&",
        "}",
        "~",
        "é",
    ];
    prop::collection::vec(prop::sample::select(fragments.to_vec()), 0..40)
        .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn sanitize_is_idempotent_on_fragment_soup(text in tricky_text()) {
        let once = sanitize(&text);
        prop_assert_eq!(sanitize(&once), once.clone(), "input {:?}", text);
    }

    #[test]
    fn sanitize_is_idempotent(text in "\\PC{0,200}") {
        let once = sanitize(&text);
        prop_assert_eq!(sanitize(&once), once.clone());
    }

    #[test]
    fn sanitize_is_idempotent_on_secret_shaped_text(
        before in filler(), secret in secret_strategy(), after in filler()
    ) {
        let once = sanitize(&format!("{before} {secret} {after}"));
        prop_assert_eq!(sanitize(&once), once.clone());
    }

    #[test]
    fn planted_secret_never_survives_random_surroundings(
        before in filler(), secret in secret_strategy(), after in filler()
    ) {
        let (before, after) = (strip_terminal_escapes(&before), strip_terminal_escapes(&after));
        let text = format!("{before} {secret} {after}");
        let out = sanitize(&text);
        prop_assert!(!out.contains(&secret), "leaked in {:?}", out);
    }

    #[test]
    fn from_raw_never_panics_and_stays_bounded(bytes in prop::collection::vec(any::<u8>(), 0..6000)) {
        let evidence = Evidence::from_raw(raw(&bytes));
        prop_assert!(evidence.message.len() <= MAX_MESSAGE_BYTES);
    }
}
