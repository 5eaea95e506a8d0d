//! Redaction of secrets and personal data, and removal of terminal escapes.
//!
//! Owns the one [`sanitize`] function every piece of provider text passes
//! through before it is matched, stored or shown. Replacement markers are
//! stable so fixtures and the catalogue can rely on them:
//!
//! | marker                   | replaces                                                    |
//! |--------------------------|-------------------------------------------------------------|
//! | `[redacted:api_key]`     | provider API keys (`sk-ant-…`, `sk-proj-…`, `sk-…`, `AIza…`, `gh[pousr]_…` (also wrapped over two lines), `github_pat_…`, `glpat-…`, `SG.….…`, `xox?-…`, `AKIA…`/`ASIA…`, `hf_…`, `sk_live_…`) and values of `api_key=`-like fields |
//! | `[redacted:token]`       | bearer / basic credentials, OAuth `access_token`, `refresh_token`, `id_token`, `*_TOKEN=`, `--token X`, Google `ya29.` tokens |
//! | `[redacted:secret]`      | values of `password`, `client_secret`, `secret` fields (also `DB_PASSWORD=`, `--password X`, URL-encoded `password%3D…`, "the password is X") |
//! | `[redacted:private_key]` | a whole PEM `-----BEGIN … PRIVATE KEY-----` … `-----END … PRIVATE KEY-----` block, or what is left of one at a cut |
//! | `[redacted:cookie]`      | the whole value of `Cookie:` / `Set-Cookie:` lines and fields |
//! | `[redacted:jwt]`         | JSON Web Tokens (`eyJ….….…`)                                  |
//! | `[redacted:email]`       | e-mail addresses                                              |
//! | `[redacted:blob]`        | runs of ≥ 32 base64/hex-ish characters containing a digit (not an absolute path of short lowercase parts) |
//! | `[path]`                 | home-directory paths (`/home/u/…`, `/Users/u/…`, `C:\Users\u\…`, JSON-escaped `\/home\/u\/…`) and URL paths + queries (`https://host/[path]`, also `https:\/\/host\/…` and URL-encoded `https%3A%2F%2Fhost%2F[path]`); user info (`user:pass@`) is dropped from all three forms |
//!
//! Kept on purpose: HTTP status numbers, error type names
//! (`overloaded_error`, `rate_limit_exceeded`), epoch seconds (10 digits is
//! far below the blob threshold), clock times and IANA zone names
//! (`Europe/Warsaw` is not a path: only home-directory prefixes and `://`
//! URLs are treated as paths), URL scheme and host, `~/…` paths, and OpenAI
//! organisation/project ids (`org-…`, `proj_…`): they name an account, are not
//! credentials, and tell the user which account hit a quota. Request ids
//! (`req_…`, even 32 hex digits long) are kept too: support asks for them.
//!
//! Every pattern is a `regex` crate automaton (linear time), and the PEM
//! block scan looks at each header once; callers bound the input size first
//! ([`super::Evidence::from_raw`]).

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};

/// Marker for provider API keys.
pub const API_KEY: &str = "[redacted:api_key]";
/// Marker for bearer/basic/OAuth tokens.
pub const TOKEN: &str = "[redacted:token]";
/// Marker for passwords and client secrets.
pub const SECRET: &str = "[redacted:secret]";
/// Marker for cookie values.
pub const COOKIE: &str = "[redacted:cookie]";
/// Marker for a PEM private key block.
pub const PRIVATE_KEY: &str = "[redacted:private_key]";
/// Marker for JSON Web Tokens.
pub const JWT: &str = "[redacted:jwt]";
/// Marker for e-mail addresses.
pub const EMAIL: &str = "[redacted:email]";
/// Marker for long opaque base64/hex runs.
pub const BLOB: &str = "[redacted:blob]";
/// Marker for redacted filesystem and URL paths.
pub const PATH: &str = "[path]";

/// Minimum length of an opaque character run that is redacted as a blob.
pub const MIN_BLOB_LEN: usize = 32;

fn re(pattern: &str) -> Regex {
    crate::ascii_regex::compile(pattern).expect("sanitizer patterns are valid")
}

static AUTH_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?i)\b((?:proxy-)?authorization)(["']?\s*[:=]\s*["']?)(?:(bearer|basic|token|digest)\s+)?[^\s"',;]+"#,
    )
});
static AUTH_SCHEME: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(bearer|basic)\s+([A-Za-z0-9._~+/=-]{8,})"));
static COOKIE_FIELD: LazyLock<Regex> =
    LazyLock::new(|| re(r#"(?i)\b(set-cookie|cookie)(["']?\s*[:=]\s*)(?:("[^"\r\n]*")|[^\r\n]*)"#));
/// `name = value` fields. The name may carry a prefix glued by `_` or
/// letters (`DB_PASSWORD`, `DJANGO_SECRET_KEY`, `PGPASSWORD`): the match
/// starts at the keyword, with no word boundary before it (a prefix of word
/// characters is what a `\b\w*` lead would allow, and the keywords stay the
/// literals the search starts from); the keyword must end the name. The separator
/// may be quoted, JSON-escaped (`\"password\":`) or URL-encoded
/// (`password%3D`, `%22password%22%3A`). A quoted value is taken as a whole
/// JSON string, escaped quotes included, one or two levels deep.
static KEY_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r#"(?i)(?P<kw>access_token|refresh_token|id_token|token|client_secret|private_key|x-api-key|x-goog-api-key|api[_-]?key|(?:aws_)?secret(?:_access)?(?:[_-]?key)?|password|passwd)"#,
        r#"(?P<sep>(?:\\*["']|%22)?\s*(?:[:=]|%3[ad])\s*)"#,
        r#"(?P<value>"#,
        r#"(?P<dq>")(?:[^"\\\r\n]|\\.)*(?P<dqe>")?"#,
        r#"|(?P<eq>\\")(?:[^"\\\r\n]|\\+[^"\\\r\n]|(?:\\\\\\\\)*\\\\\\")*(?P<eqe>(?:\\\\\\\\)*\\")?"#,
        r#"|(?P<sq>')(?:[^'\\\r\n]|\\.)*(?P<sqe>')?"#,
        r#"|\[redacted:[a-z_]+\]"#,
        r#"|[^\s"',;&}\])]+"#,
        r#")"#,
    ))
});
/// Command-line flags whose next argument is a credential:
/// `--password X`, `--api-key 'X'`, `--client-secret X`. `--token-limit 5`
/// and `--password-stdin` are other flags; a next word starting with `-` is
/// taken as another flag, and prose about a flag ("the --token flag is
/// deprecated") keeps its word (see [`FLAG_WORDS`]).
static FLAG_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r#"(?i)(?P<lead>^|[^\w-])(?P<flag>--?(?:[a-z0-9]+-)*(?P<kw>password|passwd|pass|passphrase|secret|token|api-?key))(?P<sep>[ \t]+)"#,
        r#"(?P<value>(?P<sq>')[^'\r\n]*(?P<sqe>')?|(?P<dq>")(?:[^"\\\r\n]|\\.)*(?P<dqe>")?|[^\s"'\-][^\s"']*)"#,
    ))
});
/// A password told in prose: "the password is X", "password was: 'X'".
/// Ordinary words after it ("is incorrect", "is too short") are kept, see
/// [`PROSE_WORDS`].
static PROSE_PASSWORD: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r#"(?i)\b(?P<kw>password|passphrase|passwd|passcode)(?P<sep>\s+(?:is|was)(?:\s+set\s+to)?\s*:?[ \t]+)"#,
        r#"(?P<value>'[^'\r\n]*'?|"[^"\r\n]*"?|`[^`\r\n]*`?|[^\s"'`]+)"#,
    ))
});
/// Words that follow a flag name in prose about the flag, besides
/// [`PROSE_WORDS`].
#[rustfmt::skip]
const FLAG_WORDS: &[&str] = &[
    "are", "argument", "be", "can", "cannot", "does", "flag", "flags", "has", "have", "if",
    "instead", "is", "must", "option", "options", "parameter", "should", "was", "were", "when",
    "which", "will", "with",
];
/// Words that follow "password is" in ordinary messages.
#[rustfmt::skip]
const PROSE_WORDS: &[&str] = &[
    "a", "about", "absent", "accepted", "already", "also", "always", "an", "and", "at", "bad",
    "being", "blank", "case-sensitive", "changed", "compromised", "configured", "correct",
    "different", "disabled", "displayed", "due", "empty", "encrypted", "exposed", "expired",
    "expiring", "fine", "for", "from", "given", "good", "hashed", "hidden", "ignored", "in",
    "incorrect", "insecure", "invalid", "its", "known", "leaked", "locked", "long", "longer",
    "malformed", "mandatory", "masked", "missing", "my", "needed", "never", "no", "none", "not",
    "now", "null", "of", "ok", "okay", "on", "only", "optional", "or", "present", "protected",
    "provided", "rejected", "required", "reset", "revoked", "right", "safe", "same", "saved",
    "secure", "sent", "set", "short", "shorter", "shown", "stale", "still", "stored", "strong",
    "supposed", "that", "the", "this", "to", "too", "undefined", "unknown", "unset", "updated",
    "used", "valid", "visible", "weak", "wrong", "your",
];
/// Distinctive prefixes match even when glued to preceding text; the generic
/// `sk-`, `hf_`, `sk_live_` forms need a word boundary so words like
/// `task-…` are not mistaken for keys.
static PROVIDER_KEY: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"sk-ant-[A-Za-z0-9_-]{8,}",
        r"|\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}",
        r"|\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}",
        r"|AIza[0-9A-Za-z_-]{20,}",
        r"|gh[pousr]_[A-Za-z0-9]{20,}",
        r"|github_pat_[A-Za-z0-9_]{20,}",
        r"|xox[abposr]-[A-Za-z0-9-]{10,}",
        r"|(?:AKIA|ASIA)[0-9A-Z]{16}",
        r"|\bhf_[A-Za-z0-9]{20,}",
        r"|gl(?:pat|ptt|dt|rt|soat|oas)-[A-Za-z0-9_-]{20,}",
        r"|\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}",
    ))
});
/// A fixed-length GitHub/GitLab token cut by a line wrap: the first part is
/// shorter than the whole token, so the next line's run is its rest.
static WRAPPED_KEY: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"(?:gh[pousr]_[A-Za-z0-9]{8,35}|github_pat_[A-Za-z0-9_]{8,81}|glpat-[A-Za-z0-9_-]{8,19})",
        r"(?P<br>(?:\r?\n|(?:\\r)?\\n)[ \t]{0,8})[A-Za-z0-9_-]+",
    ))
});
static PEM_BEGIN: LazyLock<Regex> =
    LazyLock::new(|| re(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"));
static PEM_END: LazyLock<Regex> =
    LazyLock::new(|| re(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"));
static GOOGLE_OAUTH: LazyLock<Regex> = LazyLock::new(|| re(r"ya29\.[0-9A-Za-z_-]{10,}"));
static JWT_RE: LazyLock<Regex> =
    LazyLock::new(|| re(r"eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"));
/// User info may hold `?` and `#` (an unencoded password); it never holds
/// `/`, so npm paths like `…/node_modules/@scope/pkg` keep their host.
static URL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?i)\b([a-z][a-z0-9+.-]{0,15}://)(?:[^/\s"'<>\\\[\]]*@)?([^/\s?#@:"'<>\\\[\]]*(?::[0-9]{1,5})?)([/?#][^\s"'<>\\)\[\]}]*)?"#,
    )
});
/// A JSON-escaped URL (`https:\/\/user:pw@host\/path`). Kept apart from
/// [`URL`] so that one keeps `://` as the literal its search starts from
/// (one pattern for both forms made the URL scan three times slower).
static ESCAPED_URL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?i)\b([a-z][a-z0-9+.-]{0,15}:\\/\\/)(?:[^/\s"'<>\\\[\]]*@)?([^/\s?#@:"'<>\\\[\]]*(?::[0-9]{1,5})?)((?:[/?#]|\\/)(?:[^\s"'<>\\)\[\]}]|\\/)*)?"#,
    )
});
/// A URL-encoded URL (`https%3A%2F%2Fuser%3Apass%40host%2Fpath`, also
/// double-encoded `%253A%252F%252F`), as a redirect or callback parameter
/// carries it: user info is everything up to the last `%40` before the first
/// encoded `/`; the host is letters, digits, dots and dashes with an optional
/// encoded port; the path runs to the next `&`, space or quote.
static ENCODED_URL: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r#"(?i)\b([a-z][a-z0-9+.-]{0,15}%(?:25)?3A%(?:25)?2F%(?:25)?2F)"#,
        r#"(?:(?:[^\s"'<>/&%]|%(?:25)?(?:[013-9A-F][0-9A-F]|2[0-9A-E]))*%(?:25)?40)?"#,
        r#"((?:[A-Za-z0-9.-]|%(?:25)?2[DE])*(?:%(?:25)?3A[0-9]{1,5})?)"#,
        r#"(?:(%(?:25)?(?:2F|3F|23))([^\s"'<>\\)\[\]}&]*))?"#,
    ))
});
static EMAIL_RE: LazyLock<Regex> =
    LazyLock::new(|| re(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"));
/// Also with JSON-escaped slashes (`\/home\/u`) and right after an escaped
/// line break (`Error\n/home/u/…`).
static UNIX_HOME: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(^|[^A-Za-z0-9_.~/\\-]|\\[nrt])(?:\\?/[A-Za-z])?\\?/(?:(?:home|Users)\\?/[^\s/\\"'`:;,)\]}]+|root\b)(?:\\?/[^\s"'`:;,)\]}]*)?"#,
    )
});
static WINDOWS_HOME: LazyLock<Regex> = LazyLock::new(|| {
    re(r#"(?i)\b[A-Z]:(?:\\{1,2}|/)(?:Users|Documents and Settings)(?:\\{1,2}|/)[^\s"'`:;,)\]}]+"#)
});
static BLOB_RE: LazyLock<Regex> =
    LazyLock::new(|| re(&format!("[A-Za-z0-9+/_=-]{{{MIN_BLOB_LEN},}}")));

/// Passes after the first: a marker ends in `]`, which can put a word
/// boundary in front of text that a first pass skipped (`AKIA…api_key=x`).
const MAX_EXTRA_PASSES: usize = 3;

/// Redacts credentials, personal data and paths from `text`.
///
/// Idempotent: `sanitize(&sanitize(x)) == sanitize(x)` (passes repeat until
/// nothing changes, at most `1 + MAX_EXTRA_PASSES` times). Never panics. See
/// the module documentation for the markers.
pub fn sanitize(text: &str) -> String {
    let mut out = sanitize_pass(text);
    for _ in 0..MAX_EXTRA_PASSES {
        let next = sanitize_pass(&out);
        if next == out {
            break;
        }
        out = next;
    }
    out
}

fn sanitize_pass(text: &str) -> String {
    let text = redact_private_keys(text);
    let text = URL.replace_all(&text, url);
    let text = ESCAPED_URL.replace_all(&text, url);
    let text = ENCODED_URL.replace_all(&text, encoded_url);
    let text = AUTH_HEADER.replace_all(&text, auth_header);
    let text = redact_credentials_after_scheme(&text);
    let text = COOKIE_FIELD.replace_all(&text, cookie);
    let text = KEY_VALUE.replace_all(&text, key_value);
    let text = FLAG_VALUE.replace_all(&text, flag_value);
    let text = PROSE_PASSWORD.replace_all(&text, prose_password);
    let text = WRAPPED_KEY.replace_all(&text, |c: &Captures<'_>| format!("{API_KEY}{}", &c["br"]));
    let text = PROVIDER_KEY.replace_all(&text, API_KEY);
    let text = GOOGLE_OAUTH.replace_all(&text, TOKEN);
    let text = JWT_RE.replace_all(&text, JWT);
    let text = EMAIL_RE.replace_all(&text, EMAIL);
    let text = WINDOWS_HOME.replace_all(&text, PATH);
    let text = UNIX_HOME.replace_all(&text, |c: &Captures<'_>| format!("{}{PATH}", &c[1]));
    let text = BLOB_RE.replace_all(&text, blob);
    text.into_owned()
}

fn auth_header(c: &Captures<'_>) -> String {
    match c.get(3) {
        Some(scheme) => format!("{}{}{} {TOKEN}", &c[1], &c[2], scheme.as_str()),
        None => format!("{}{}{TOKEN}", &c[1], &c[2]),
    }
}

/// A bare `Bearer`/`Basic` credential is only redacted when it looks like
/// one (see [`looks_like_credential`]), so prose like "Basic
/// authentication" survives. A rejected candidate may contain the start of
/// the next one (`Bearer x-Bearer tok…`), so scanning resumes right after the
/// scheme word rather than after the whole candidate.
fn redact_credentials_after_scheme(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut pos = 0;
    while let Some(c) = AUTH_SCHEME.captures_at(text, pos) {
        let (whole, scheme, credential) = (&c[0], &c[1], &c[2]);
        let start = c.get(0).map_or(pos, |m| m.start());
        if looks_like_credential(scheme, credential) {
            out.push_str(&text[copied..start]);
            out.push_str(&format!("{scheme} {TOKEN}"));
            copied = start + whole.len();
            pos = copied;
        } else {
            pos = start + scheme.len();
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// Long words that follow "Bearer" in prose.
const BEARER_WORDS: &[&str] = &[
    "authentication",
    "authenticated",
    "authorization",
    "authorisation",
    "unauthorized",
    "unauthorised",
    "credentials",
    "configuration",
    "requirements",
];

/// At least 12 characters, and not a plain word: a digit or symbol, mixed
/// case inside (`AbCdEf…`), 20 or more letters, or after `Bearer` (rare in
/// prose) any long lowercase word but [`BEARER_WORDS`]. After `Basic` (a
/// common adjective) a plain word of fewer than 20 letters is kept.
fn looks_like_credential(scheme: &str, credential: &str) -> bool {
    if credential.len() < 12 {
        return false;
    }
    if !credential.bytes().all(|b| b.is_ascii_alphabetic()) || credential.len() >= 20 {
        return true;
    }
    let rest = &credential[1..];
    let plain_word = rest.bytes().all(|b| b.is_ascii_lowercase())
        || credential.bytes().all(|b| b.is_ascii_uppercase());
    if !plain_word {
        return true;
    }
    scheme.eq_ignore_ascii_case("bearer")
        && !BEARER_WORDS.contains(&credential.to_ascii_lowercase().as_str())
}

fn cookie(c: &Captures<'_>) -> String {
    let quoted = c.get(3).is_some();
    let (open, close) = if quoted { ("\"", "\"") } else { ("", "") };
    format!("{}{}{open}{COOKIE}{close}", &c[1], &c[2])
}

fn marker_for(keyword: &str) -> &'static str {
    let keyword = keyword.to_ascii_lowercase();
    if keyword.contains("secret") || keyword.starts_with("pass") || keyword == "private_key" {
        SECRET
    } else if keyword.ends_with("token") {
        TOKEN
    } else {
        API_KEY
    }
}

/// A value that is already a marker is left alone, so a more specific
/// marker (`"private_key":"[redacted:private_key]"`) is kept.
fn is_marker(value: &str) -> bool {
    (value.starts_with("[redacted:") && value.ends_with(']') && !value[1..].contains('['))
        || value == PATH
}

/// The opening and closing quotes a value had, so the marker keeps them.
fn quotes<'a>(c: &'a Captures<'_>) -> (&'a str, &'a str) {
    for (open, close) in [("dq", "dqe"), ("eq", "eqe"), ("sq", "sqe")] {
        if let Some(o) = c.name(open) {
            let closing = match c.name(close) {
                Some(_) if open == "eq" => "\\\"",
                Some(m) => m.as_str(),
                None => "",
            };
            return (o.as_str(), closing);
        }
    }
    ("", "")
}

fn key_value(c: &Captures<'_>) -> String {
    let (open, close) = quotes(c);
    let value = &c["value"];
    let inner = &value[open.len()..value.len() - close.len()];
    if is_marker(inner) || (inner.is_empty() && !close.is_empty()) {
        return c[0].to_owned();
    }
    let marker = marker_for(&c["kw"]);
    format!("{}{}{open}{marker}{close}", &c["kw"], &c["sep"])
}

fn flag_value(c: &Captures<'_>) -> String {
    let (open, close) = quotes(c);
    let value = &c["value"];
    if is_marker(&value[open.len()..value.len() - close.len()]) {
        return c[0].to_owned();
    }
    if open.is_empty() {
        let word = value
            .trim_end_matches(['.', ',', ';', ':', '!', '?', ')'])
            .to_ascii_lowercase();
        if PROSE_WORDS.contains(&word.as_str()) || FLAG_WORDS.contains(&word.as_str()) {
            return c[0].to_owned();
        }
    }
    let marker = marker_for(&c["kw"]);
    format!(
        "{}{}{}{open}{marker}{close}",
        &c["lead"], &c["flag"], &c["sep"]
    )
}

fn prose_password(c: &Captures<'_>) -> String {
    let value = &c["value"];
    let head = format!("{}{}", &c["kw"], &c["sep"]);
    if let Some(q) = value
        .chars()
        .next()
        .filter(|q| matches!(q, '\'' | '"' | '`'))
    {
        let closed = value.len() > 1 && value.ends_with(q);
        let inner = &value[1..value.len() - usize::from(closed)];
        if is_marker(inner) || inner.is_empty() {
            return c[0].to_owned();
        }
        let close = if closed {
            &value[value.len() - 1..]
        } else {
            ""
        };
        return format!("{head}{q}{SECRET}{close}");
    }
    let body = value.trim_end_matches(['.', ',', ';', ':', '!', '?', ')']);
    let tail = &value[body.len()..];
    let word = body.to_ascii_lowercase();
    if body.is_empty() || is_marker(body) || PROSE_WORDS.contains(&word.as_str()) {
        return c[0].to_owned();
    }
    format!("{head}{SECRET}{tail}")
}

/// Keeps scheme and host, drops user info, replaces path and query with
/// `/[path]` (`\/[path]` in a JSON-escaped URL); sentence punctuation after
/// the URL is kept.
fn url(c: &Captures<'_>) -> String {
    let scheme = &c[1];
    let host = &c[2];
    let Some(rest) = c.get(3).map(|m| m.as_str()) else {
        return format!("{scheme}{host}");
    };
    let body = rest.trim_end_matches(['.', ',', ':', ';', '!', '?']);
    let tail = &rest[body.len()..];
    if body == "/" || body == "\\/" || body.is_empty() {
        return format!("{scheme}{host}{body}{tail}");
    }
    let slash = if scheme.ends_with("\\/") { "\\/" } else { "/" };
    format!("{scheme}{host}{slash}{PATH}{tail}")
}

/// Like [`url`] for a URL-encoded URL: scheme and host kept, user info
/// dropped, path and query replaced with `%2F[path]`.
fn encoded_url(c: &Captures<'_>) -> String {
    let (scheme, host) = (&c[1], &c[2]);
    match (c.get(3), c.get(4).map_or("", |m| m.as_str())) {
        (Some(sep), "") => format!("{scheme}{host}{}", sep.as_str()),
        (Some(_), _) => format!("{scheme}{host}%2F{PATH}"),
        (None, _) => format!("{scheme}{host}"),
    }
}

/// Replaces PEM private key blocks with [`PRIVATE_KEY`]: `BEGIN` through
/// the next `END`, or, where a cut or the end of the text took one of the
/// two, the base64 lines next to the one that is left. Lines may be broken by
/// real or JSON-escaped (`\n`) newlines. Linear: each header is looked at
/// once and the body scans never overlap.
fn redact_private_keys(text: &str) -> Cow<'_, str> {
    if !text.contains("PRIVATE KEY") {
        return Cow::Borrowed(text);
    }
    let mut headers: Vec<(usize, usize, bool)> = PEM_BEGIN
        .find_iter(text)
        .map(|m| (m.start(), m.end(), true))
        .chain(PEM_END.find_iter(text).map(|m| (m.start(), m.end(), false)))
        .collect();
    if headers.is_empty() {
        return Cow::Borrowed(text);
    }
    headers.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i < headers.len() {
        let (start, end, begin) = headers[i];
        i += 1;
        if start < copied {
            continue;
        }
        let (from, to) = if begin {
            match headers.get(i) {
                Some(&(_, end_of_end, false)) => {
                    i += 1;
                    (start, end_of_end)
                }
                _ => (start, end + pem_body_after(&text[end..])),
            }
        } else {
            (copied.max(pem_body_before(&text[..start])), end)
        };
        out.push_str(&text[copied..from]);
        out.push_str(PRIVATE_KEY);
        copied = to;
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

fn is_base64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')
}

/// Length of a line break at the start of `b`: `\n`, `\r\n`, or the
/// JSON-escaped `\n` / `\r\n`.
fn break_at(b: &[u8]) -> usize {
    for br in [&b"\r\n"[..], b"\n", b"\\r\\n", b"\\n"] {
        if b.starts_with(br) {
            return br.len();
        }
    }
    0
}

/// Length of a line break ending at the end of `b`.
fn break_before(b: &[u8]) -> usize {
    for br in [&b"\\r\\n"[..], b"\\n", b"\r\n", b"\n"] {
        if b.ends_with(br) {
            return br.len();
        }
    }
    0
}

/// PEM header lines of encrypted keys.
const PEM_FIELDS: [&[u8]; 4] = [b"Proc-Type:", b"DEK-Info:", b"Comment:", b"Version:"];

/// How much of `text` (right after a `BEGIN` line with no `END`) is key
/// body: whole base64 or PEM header lines, and a base64 run that ends a
/// JSON string (`…abc"`).
fn pem_body_after(text: &str) -> usize {
    let b = text.as_bytes();
    let mut taken = 0;
    let mut i = 0;
    loop {
        let br = break_at(&b[i..]);
        if br == 0 && i > 0 {
            return taken;
        }
        let mut j = i + br;
        while b.get(j).is_some_and(|&c| c == b' ' || c == b'\t') {
            j += 1;
        }
        if PEM_FIELDS.iter().any(|f| b[j..].starts_with(f)) {
            while j < b.len() && break_at(&b[j..]) == 0 {
                j += 1;
            }
            taken = j;
            i = j;
            continue;
        }
        let run = b[j..].iter().take_while(|&&c| is_base64(c)).count();
        let line_end = j + run;
        if run == 0 {
            if br == 0 || break_at(&b[line_end..]) == 0 {
                return taken;
            }
            i = line_end;
            continue;
        }
        if line_end == b.len() || break_at(&b[line_end..]) > 0 {
            taken = line_end;
            i = line_end;
            continue;
        }
        if matches!(b[line_end], b'"' | b'\'' | b'\\') {
            taken = line_end;
        }
        return taken;
    }
}

/// Where the key body before an `END` line with no `BEGIN` starts: whole
/// base64 lines back from it, and a base64 run that starts a JSON string.
fn pem_body_before(text: &str) -> usize {
    let b = text.as_bytes();
    let mut start = b.len();
    let mut i = b.len();
    loop {
        let br = break_before(&b[..i]);
        if br == 0 && i < b.len() {
            return start;
        }
        let line_end = i - br;
        let run = b[..line_end]
            .iter()
            .rev()
            .take_while(|&&c| is_base64(c))
            .count();
        if run == 0 {
            return start;
        }
        let indent = b[..line_end - run]
            .iter()
            .rev()
            .take_while(|&&c| c == b' ' || c == b'\t')
            .count();
        let line_start = line_end - run - indent;
        if line_start == 0 || break_before(&b[..line_start]) > 0 {
            start = line_start;
            i = line_start;
            continue;
        }
        if matches!(b[line_start - 1], b'"' | b'\'') {
            start = line_start;
        }
        return start;
    }
}

fn blob(c: &Captures<'_>) -> Cow<'static, str> {
    let run = c.get(0).map_or("", |m| m.as_str());
    if run.bytes().any(|b| b.is_ascii_digit()) && !is_plain_path(run) && !is_request_id(run) {
        Cow::Borrowed(BLOB)
    } else {
        Cow::Owned(run.to_owned())
    }
}

/// A provider's request id (`req_` and 16 to 64 letters and digits, OpenAI's
/// `req_` + 32 hex digits, Anthropic's `req_011C…`), alone or as the value of
/// a `request_id=` field: it names one failed request for the provider's
/// support and grants nothing, so it is kept. No provider key starts with
/// `req_`; a key elsewhere in the same text is still redacted.
fn is_request_id(run: &str) -> bool {
    let id = match run.rsplit_once('=') {
        Some((field, id))
            if field
                .bytes()
                .all(|b| b.is_ascii_alphabetic() || b == b'_' || b == b'-') =>
        {
            id
        }
        Some(_) => return false,
        None => run,
    };
    id.strip_prefix("req_").is_some_and(|rest| {
        (16..=64).contains(&rest.len()) && rest.bytes().all(|b| b.is_ascii_alphanumeric())
    })
}

/// An absolute path of lowercase parts, none a blob on its own
/// (`/opt/agents/claude-2/bin/agent`, the program a spawn error names): the
/// `/` would otherwise join its parts into one long "blob". Base64 that
/// starts with `/` and has no capital letter in 32 characters is about
/// (38/64)^32 ≈ 6·10⁻⁸ likely; a long part still makes it a blob.
fn is_plain_path(run: &str) -> bool {
    let Some(rest) = run.strip_prefix('/') else {
        return false;
    };
    rest.contains('/')
        && rest.split('/').all(|part| {
            !part.is_empty()
                && part.len() < MIN_BLOB_LEN
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        })
}

/// Removes ANSI/VT escape sequences and control characters.
///
/// CSI (`ESC [ … final`), OSC (`ESC ] … BEL|ESC \`), DCS/SOS/PM/APC strings
/// and two-byte escapes are dropped; carriage returns become newlines (progress
/// redraws become separate lines); tabs and newlines are kept; every other
/// C0/C1 control character and DEL is dropped. Linear in the input.
pub fn strip_terminal_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '\u{1b}' => skip_escape(&mut chars),
            '\u{9b}' => skip_csi(&mut chars),
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    out.push('\n');
                }
            }
            '\n' | '\t' => out.push(ch),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

fn skip_escape(chars: &mut Chars<'_>) {
    match chars.next() {
        Some('[') => skip_csi(chars),
        Some(']' | 'P' | 'X' | '^' | '_') => skip_string(chars),
        Some(_) | None => {}
    }
}

/// CSI: parameter and intermediate bytes up to one final byte `@`..`~`.
fn skip_csi(chars: &mut Chars<'_>) {
    for ch in chars.by_ref() {
        if ('\u{40}'..='\u{7e}').contains(&ch) {
            return;
        }
        if !('\u{20}'..='\u{3f}').contains(&ch) {
            return;
        }
    }
}

/// OSC/DCS-style string: up to BEL, ST (`ESC \`) or C1 ST.
fn skip_string(chars: &mut Chars<'_>) {
    while let Some(ch) = chars.next() {
        match ch {
            '\u{7}' | '\u{9c}' => return,
            '\u{1b}' => {
                if chars.peek() == Some(&'\\') {
                    chars.next();
                }
                return;
            }
            _ => {}
        }
    }
}
