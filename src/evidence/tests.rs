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
    ("glpat-Zq8vKx2LmN4pR7tW9yB1", API_KEY),
    ("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", API_KEY),
    ("ya29.a0AfH6SMBx0123456789abcdefABCDEF-_xyz", TOKEN),
    ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", JWT),
    ("alice.smith+work@example.co.uk", EMAIL),
    ("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", BLOB),
    ("dGhpcyBpcyBhIHNlY3JldCB2YWx1ZSAxMjM0NTY3ODkw/+==", BLOB),
    // A path whose part is a blob on its own, or base64 that starts with `/`.
    ("/srv/keys/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b", BLOB),
    ("/dGhpcyBp/cyBhIHNlY3JldCB2YWx1ZSAx", BLOB),
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
fn url_encoded_user_info_is_dropped_like_plain_user_info() {
    let cases = [
        (
            "redirect=https%3A%2F%2Fuser%3Ahunter2pass%40git.example.com%2Forg%2Frepo.git&x=1",
            "redirect=https%3A%2F%2Fgit.example.com%2F[path]&x=1",
        ),
        (
            "proxy https%3A%2F%2Fuser%3Apass%40host",
            "proxy https%3A%2F%2Fhost",
        ),
        (
            "next=HTTPS%253A%252F%252Fbot%253As3cr3t%2540proxy.corp%253A8080%252Fv1",
            "next=HTTPS%253A%252F%252Fproxy.corp%253A8080%2F[path]",
        ),
        (
            "callback https%3A%2F%2Fapi.example.com%3A443",
            "callback https%3A%2F%2Fapi.example.com%3A443",
        ),
    ];
    for (input, expected) in cases {
        let out = sanitize(input);
        assert_eq!(out, expected, "{input}");
        assert_eq!(sanitize(&out), out, "idempotent on {input}");
    }
    // Inside a plain URL's query the whole query is a path already.
    assert_eq!(
        sanitize("https://login.example.com/cb?to=https%3A%2F%2Fu%3Ap%40h"),
        "https://login.example.com/[path]"
    );
}

#[test]
fn request_ids_are_kept_and_never_taken_for_keys() {
    for text in [
        r#"{"error":{"type":"rate_limit_error"},"request_id":"req_13e38c243f89126dd24093d2e4892535"}"#,
        "x-request-id: req_011CV2S4jxpPs7x8XWqHUiM7",
        "request_id=req_13e38c243f89126dd24093d2e4892535",
    ] {
        assert_eq!(sanitize(text), text);
    }
    let out = sanitize(
        "request_id=req_13e38c243f89126dd24093d2e4892535 key sk-ant-api03-AbCdEfGhIjKlMnOpQrSt",
    );
    assert!(
        out.contains("req_13e38c243f89126dd24093d2e4892535"),
        "{out}"
    );
    assert!(
        out.contains("[redacted:api_key]") && !out.contains("AbCdEfGh"),
        "{out}"
    );
    // Only `req_` and letters and digits: a longer glued run is still a blob.
    assert_eq!(
        sanitize("req_13e38c243f89126dd24093d2e4892535/9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
        "[redacted:blob]"
    );
    assert_eq!(
        sanitize("token=req_13e38c243f89126dd24093d2e4892535"),
        "token=[redacted:token]"
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
    let occurred_at = Utc.with_ymd_and_hms(2025, 6, 14, 17, 56, 6).unwrap();
    RawEvidence::new(Provider::ClaudeCode, message, occurred_at)
        .with_phase(Phase::Exit)
        .with_http_status(429)
        .with_exit_code(1)
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
        "glpat-",
        "SG.",
        "DB_",
        "PASSWORD",
        "_TOKEN",
        "--password ",
        "--token ",
        " is ",
        "incorrect",
        "%3D",
        "%22",
        "\\",
        "\\\"",
        "\\/",
        "\\n",
        "\n  ",
        ":\\/\\/",
        "-----BEGIN PRIVATE KEY-----",
        "-----END RSA PRIVATE KEY-----",
        "MIIEvQIBADAN",
        "abc=",
        "user:pw@",
        "AbCdEfGhIjKlMnOp",
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

// ─── Issue 13 part 2: forms that used to survive sanitizing ──────────────────
//
// Every key below is synthetic (made-up characters in the provider's shape).

/// Marker for private key blocks.
const PRIVATE_KEY: &str = "[redacted:private_key]";

/// (input, pieces that must vanish, text the output must contain)
const SURVIVED_BEFORE: &[(&str, &[&str], &str)] = &[
    (
        "remote: HTTP Basic: Access denied, token glpat-Zq8vKx2LmN4pR7tW9yB1 rejected",
        &["glpat-Zq8vKx2LmN4pR7tW9yB1", "Zq8vKx2LmN4pR7tW9yB1"],
        "token [redacted:api_key] rejected",
    ),
    (
        "sendgrid: 401 with key 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",
        &["Zq8vKx2LmN4pR7tW9yB1cD", "eF3gH5iJ7kL9mN1oP3qR"],
        "with key [redacted:api_key]",
    ),
    (
        "env: DB_PASSWORD=Zq8vKx2Lm DEBUG=1",
        &["Zq8vKx2Lm"],
        "DB_PASSWORD=[redacted:secret] DEBUG=1",
    ),
    (
        "DJANGO_SECRET_KEY=django-insecure-zq8vkx2lmn4pr7tw",
        &["django-insecure", "zq8vkx2lmn4pr7tw"],
        "DJANGO_SECRET_KEY=[redacted:secret]",
    ),
    (
        "DISCORD_TOKEN=MTIzNDU2Nzg5.Zq8vKx.synthetic-discord",
        &["MTIzNDU2Nzg5", "synthetic-discord"],
        "DISCORD_TOKEN=[redacted:token]",
    ),
    (
        "PGPASSWORD=hunter2 psql -h db",
        &["hunter2"],
        "PGPASSWORD=[redacted:secret] psql",
    ),
    (
        r#"export MY_SERVICE_API_KEY="abcDEF123""#,
        &["abcDEF123"],
        r#"MY_SERVICE_API_KEY="[redacted:api_key]""#,
    ),
    (
        "mysql --password hunter2xyz -h db.internal",
        &["hunter2xyz"],
        "--password [redacted:secret] -h",
    ),
    (
        "gh auth login --token 'Zq8v Kx2L' failed",
        &["Zq8v", "Kx2L"],
        "--token '[redacted:token]' failed",
    ),
    (
        "vault write --client-secret Zq8vKx2Lm --passphrase 'two words' done",
        &["Zq8vKx2Lm", "two words"],
        "--client-secret [redacted:secret] --passphrase '[redacted:secret]' done",
    ),
    (
        "login --password=-Zq8vKx2Lm",
        &["Zq8vKx2Lm"],
        "--password=[redacted:secret]",
    ),
    (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGZq8vKx2LmN4\n=Zq8v\n-----END PGP PRIVATE KEY BLOCK-----",
        &["lQOYBGZq8vKx2LmN4", "=Zq8v"],
        "[redacted:private_key]",
    ),
    (
        "cli --api-key=abc123 --verbose",
        &["abc123"],
        "--api-key=[redacted:api_key] --verbose",
    ),
    (
        "the password is hunter2, please keep it safe",
        &["hunter2"],
        "the password is [redacted:secret], please",
    ),
    (
        "The password is: 'correct horse battery'.",
        &["correct", "horse", "battery"],
        "The password is: '[redacted:secret]'.",
    ),
    (
        "my password was letmein",
        &["letmein"],
        "my password was [redacted:secret]",
    ),
    (
        "body=user%3Dbob%26password%3DZq8vKx2Lm%21%26remember%3D1",
        &["Zq8vKx2Lm"],
        "password%3D[redacted:secret]",
    ),
    (
        "form %7B%22password%22%3A%22Zq8vKx2Lm%22%7D",
        &["Zq8vKx2Lm"],
        "password%22%3A[redacted:secret]",
    ),
    (
        "fetch https://deploy:Zq8vKx2Lm@git.example.org failed",
        &["deploy", "Zq8vKx2Lm"],
        "fetch https://git.example.org failed",
    ),
    (
        "proxy http://user:Zq8vKx2Lm@proxy.internal:3128/x",
        &["user:", "Zq8vKx2Lm"],
        "http://proxy.internal:3128/[path]",
    ),
    (
        r#"{"url":"https:\/\/user:Zq8vKx2Lm@api.example.com\/v1\/x"}"#,
        &["user:", "Zq8vKx2Lm", "v1"],
        r#"https:\/\/api.example.com\/[path]"#,
    ),
    (
        r#"{"password":"ab\"cd-Zq8vKx2","user":"bob"}"#,
        &["ab\\\"", "cd-Zq8vKx2"],
        r#"{"password":"[redacted:secret]","user":"bob"}"#,
    ),
    (
        r#"{"message":"{\"password\":\"ab\\\"cd-Zq8vKx2\",\"user\":\"bob\"}"}"#,
        &["ab\\\\", "cd-Zq8vKx2"],
        r#"{\"password\":\"[redacted:secret]\",\"user\":\"bob\"}"#,
    ),
    (
        r#"{"cwd":"\/home\/alice\/projects\/app","code":1}"#,
        &["alice", "projects"],
        r#"{"cwd":"[path]","code":1}"#,
    ),
    (
        r#"{"file":"\/Users\/bob.smith\/.claude.json"}"#,
        &["bob.smith", "claude.json"],
        r#"{"file":"[path]"}"#,
    ),
    (
        r#"stack: "Error\n/home/carol/app/x.js:1""#,
        &["carol"],
        r#"Error\n[path]"#,
    ),
    (
        "retrying with Bearer AbCdEfGhIjKlMnOpQrSt now",
        &["AbCdEfGhIjKlMnOpQrSt"],
        "Bearer [redacted:token] now",
    ),
    (
        "sent bearer abcdefghijklmnopqrstuvwxyz",
        &["abcdefghijklmnopqrstuvwxyz"],
        "bearer [redacted:token]",
    ),
    (
        "key: -----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAzq8vKx2LmN4pR7tW9yB1cD3fG5hJ7kL9mN1oP3qR5sT7uV9w\nX1yZ3aB5cD7eF9gH1iJ3kL5mN7oP9qR1sT3uV5wX7yZ9aB1cD3eF5gH7iJ9kL1m\nZq8vKx2LmN4=\n-----END RSA PRIVATE KEY-----\nload failed",
        &["MIIEowIBAAKCAQEA", "Zq8vKx2LmN4=", "BEGIN RSA", "END RSA"],
        "key: [redacted:private_key]\nload failed",
    ),
    (
        r#"{"private_key":"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nZq8vKx2LmN4=\n-----END PRIVATE KEY-----\n","client_email":"x"}"#,
        &["MIIEvQIBADAN", "Zq8vKx2LmN4="],
        r#""private_key":"[redacted:"#,
    ),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\nZq8vKx2LmN4\n",
        &["b3BlbnNzaC1rZXktdjEAAAAABG5vbmU", "Zq8vKx2LmN4"],
        "[redacted:private_key]",
    ),
    (
        "Zq8vKx2LmN4pR7tW9yB1cD3fG5hJ7kL9mN1oP3qR5sT7uV9wX1yZ3aB5cD7eF9g\nZq8vKx2LmN4=\n-----END EC PRIVATE KEY-----\nnext",
        &["Zq8vKx2LmN4=", "END EC"],
        "[redacted:private_key]\nnext",
    ),
    (
        "push rejected for ghp_Zq8vKx2LmN4pR7tW\n9yB1cD3fG5hJ7kL9mN1o (status 403)",
        &["Zq8vKx2LmN4pR7tW", "9yB1cD3fG5hJ7kL9mN1o"],
        "for [redacted:api_key]\n (status 403)",
    ),
    (
        r#"{"line":"token ghp_Zq8vKx2LmN4pR7tW9yB1\n  cD3fG5hJ7kL9mN1o"}"#,
        &["Zq8vKx2LmN4pR7tW9yB1", "cD3fG5hJ7kL9mN1o"],
        "token [redacted:api_key]",
    ),
];

#[test]
fn forms_that_survived_sanitizing_are_redacted() {
    let mut failures = Vec::new();
    for (input, secrets, expected) in SURVIVED_BEFORE {
        let out = sanitize(input);
        let leaked: Vec<&&str> = secrets.iter().filter(|s| out.contains(**s)).collect();
        if !leaked.is_empty() || !out.contains(expected) {
            failures.push(format!(
                "{input}\n   -> {out}\n   leaked {leaked:?}, expected to contain {expected}"
            ));
        }
        assert_eq!(sanitize(&out), out, "idempotent on {input}");
    }
    assert!(
        failures.is_empty(),
        "{} failing case(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn private_key_marker_replaces_the_whole_block() {
    let out = sanitize(
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A1B\n\nMIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG\nabc=\n-----END ENCRYPTED PRIVATE KEY-----",
    );
    assert_eq!(out, PRIVATE_KEY);
}

/// Ordinary agent prose near the new patterns stays as it is.
#[test]
fn prose_near_the_new_patterns_is_kept() {
    let kept = [
        "password reset email sent",
        "Your password is incorrect.",
        "the password is too short",
        "The password is required",
        "password was changed 3 days ago",
        "token limit reached: max_tokens is 4096",
        r#"{"usage":{"input_tokens":120,"output_tokens":7,"max_tokens":4096}}"#,
        "the bearer of bad news",
        "Bearer authentication failed",
        "Bearer token required",
        "Basic authentication failed",
        "docker login --password-stdin",
        "--token-limit 5000",
        "mysql --password --verbose",
        r#"{"password": "", "api_key": ''}"#,
        "the --token flag is deprecated; pass --api-key instead",
        "use --password, or --secret with a file",
        r#"{"token_type": "bearer", "expires_in": 3600}"#,
        "password_reset_required: true",
        "SG.foo.bar is not a key",
        "the glpat- prefix marks GitLab tokens",
        "-----BEGIN CERTIFICATE----- is public",
        r#"{"path":"\/tmp\/build","home":"~\/x"}"#,
        "ghp_ tokens start with a prefix\nand that is all",
        "2 failed, 3 passed",
        "cannot start agent: no such file (/some/long/path/claude-2/bin/agent)",
        "/opt/recourse-agents/node_modules/claude-code-2/bin/claude",
    ];
    for text in kept {
        assert_eq!(sanitize(text), text, "must be unchanged");
    }
}

/// `len` characters of a base64-ish run with digits: a blob that the
/// sanitizer turns into a short marker.
fn blob_of(len: usize) -> String {
    "QUJ1".repeat(len / 4 + 1)[..len].to_owned()
}

/// The raw bound cuts the head at [`RAW_HEAD_BYTES`] and the tail at
/// [`RAW_TAIL_BYTES`] from the end. With no whitespace near a cut, a key
/// straddling it used to leave a 14–31 character piece that no pattern
/// recognises; where the text around it shrinks when sanitized (a long blob
/// becomes a short marker), that piece reached the stored message.
#[test]
fn keys_straddling_the_raw_cuts_leave_no_fragments() {
    let hex = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b";
    let key = "Zq8vKx2LmN4pR7tW9yB1cD3fG5hJ7kL9mN1o";
    // Head: a blob, then a hash whose first 20 characters are before the bound.
    let mut text = format!(
        "{{\"data\":\"{}\",\"sha\":\"",
        blob_of(RAW_HEAD_BYTES - 20 - 18)
    );
    assert_eq!(text.len(), RAW_HEAD_BYTES - 20);
    text.push_str(hex);
    text.push_str("\"}\n");
    text.push_str(&"middle ".repeat(20_000));
    // Tail: a key whose last 24 characters are after the bound, a blob, the error.
    let tail = format!(
        "{key}\",\"data\":\"{}\"}}\n429 rate_limit_error",
        blob_of(RAW_TAIL_BYTES + 12 - 69)
    );
    assert_eq!(tail.len(), RAW_TAIL_BYTES + 12);
    text.push_str("{\"k\":\"");
    text.push_str(&tail);
    let evidence = Evidence::from_raw(raw(text.as_bytes()));
    assert!(evidence.truncated);
    for piece in [&hex[..14], &key[key.len() - 14..]] {
        assert!(
            !evidence.message.contains(piece),
            "{piece} survived in {}",
            evidence.message
        );
    }
    assert!(evidence.message.ends_with("429 rate_limit_error"));
}

#[test]
fn a_cut_prefers_a_line_boundary_so_a_value_does_not_lose_its_key() {
    // `"password": "correct horse battery staple …"` with the tail bound
    // between words: cut at a space, the later words would lose the
    // `password` context that gets them redacted.
    let mut text = "word ".repeat(RAW_HEAD_BYTES / 5 + 4000);
    text.push_str("\n{\"password\": \"");
    text.push_str(&"correct horse battery staple ".repeat(40));
    let after = format!(
        "\"}}\n{{\"data\":\"{}\"}}\nrate_limit_error\n",
        blob_of(RAW_TAIL_BYTES - 600 - 32)
    );
    assert_eq!(after.len(), RAW_TAIL_BYTES - 600);
    text.push_str(&after);
    let evidence = Evidence::from_raw(raw(text.as_bytes()));
    assert!(evidence.truncated);
    assert!(!evidence.message.contains("horse"), "{}", evidence.message);
    assert!(evidence.message.ends_with("rate_limit_error\n"));
}

#[test]
fn structured_fields_cut_before_sanitizing_leave_no_fragments() {
    let mut input = raw(b"x");
    // A blob that shrinks to a marker, then a key cut by the raw field bound
    // (four times MAX_FIELD_BYTES) 20 characters in.
    let mut value = blob_of(MAX_FIELD_BYTES * 4 - 21);
    value.push(',');
    value.push_str("Zq8vKx2LmN4pR7tW9yB1cD3fG5hJ7kL9mN1o");
    input.error_type = Some(value);
    let error_type = Evidence::from_raw(input).error_type.expect("kept");
    assert!(!error_type.contains("Zq8vKx2L"), "{error_type}");
}

/// 14-character windows of `key`: any of them in the output is a fragment.
fn windows_of(key: &str) -> Vec<&str> {
    (0..=key.len() - 14).map(|i| &key[i..i + 14]).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A key at any offset around either raw cut, behind a blob that shrinks
    /// to a marker (so the cut edge reaches the stored message), leaves no
    /// 14-character piece.
    #[test]
    fn no_key_fragment_survives_at_either_raw_cut(
        head_offset in 0usize..50, tail_offset in 0usize..50, sep in prop::sample::select(vec!["\",\"k\":\"", ":", "=", "/", "."])
    ) {
        let key = "Zq8vKx2LmN4pR7tW9yB1cD3fG5hJ7kL9mN1o";
        let head_blob = blob_of(RAW_HEAD_BYTES - head_offset - sep.len());
        let mut text = format!("{head_blob}{sep}{key}\"}}\n");
        text.push_str(&"middle ".repeat(3000));
        // The tail bound falls `tail_offset` characters into the key (or after it).
        let blob_len = RAW_TAIL_BYTES + tail_offset - key.len() - sep.len() - 21;
        let tail = format!("{key}{sep}{}\n429 rate_limit_error", blob_of(blob_len));
        prop_assert_eq!(tail.len(), RAW_TAIL_BYTES + tail_offset);
        text.push_str(&tail);
        let evidence = Evidence::from_raw(raw(text.as_bytes()));
        prop_assert!(evidence.message.ends_with("429 rate_limit_error"));
        for piece in windows_of(key) {
            prop_assert!(!evidence.message.contains(piece), "{} in {}", piece, evidence.message);
        }
    }
}

#[test]
fn an_orphan_end_takes_base64_lines_only_not_the_prose_before_them() {
    assert_eq!(
        sanitize("Error loading the key\nZq8vKx2LmN4=\n-----END RSA PRIVATE KEY-----\ndone"),
        "Error loading the key\n[redacted:private_key]\ndone"
    );
    assert_eq!(
        sanitize("-----BEGIN RSA PRIVATE KEY-----\nZq8vKx2LmN4=\nError: bad padding"),
        "[redacted:private_key]\nError: bad padding"
    );
}

#[test]
fn every_provider_has_words_of_its_own_for_a_person() {
    let words: std::collections::BTreeSet<&str> = Provider::ALL.iter().map(|p| p.words()).collect();
    assert_eq!(
        words.len(),
        Provider::ALL.len(),
        "no two providers read the same"
    );
    for p in Provider::ALL {
        assert_ne!(
            p.words(),
            p.as_str(),
            "{p:?} is shown in words, not by its name"
        );
    }
}
