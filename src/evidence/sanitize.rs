//! Redaction of secrets and personal data, and removal of terminal escapes.
//!
//! Owns the one [`sanitize`] function every piece of provider text passes
//! through before it is matched, stored or shown. Replacement markers are
//! stable so fixtures and the catalogue can rely on them:
//!
//! | marker               | replaces                                                        |
//! |----------------------|-----------------------------------------------------------------|
//! | `[redacted:api_key]` | provider API keys (`sk-ant-…`, `sk-proj-…`, `sk-…`, `AIza…`, `gh[pousr]_…`, `github_pat_…`, `xox?-…`, `AKIA…`/`ASIA…`, `hf_…`, `sk_live_…`) and values of `api_key=`-like fields |
//! | `[redacted:token]`   | bearer / basic credentials, OAuth `access_token`, `refresh_token`, `id_token`, Google `ya29.` tokens |
//! | `[redacted:secret]`  | values of `password`, `client_secret`, `secret` fields          |
//! | `[redacted:cookie]`  | the whole value of `Cookie:` / `Set-Cookie:` lines and fields  |
//! | `[redacted:jwt]`     | JSON Web Tokens (`eyJ….….…`)                                    |
//! | `[redacted:email]`   | e-mail addresses                                                |
//! | `[redacted:blob]`    | runs of ≥ 32 base64/hex-ish characters containing a digit       |
//! | `[path]`             | home-directory paths (`/home/u/…`, `/Users/u/…`, `C:\Users\u\…`) and URL paths + queries (`https://host/[path]`) |
//!
//! Kept on purpose: HTTP status numbers, error type names
//! (`overloaded_error`, `rate_limit_exceeded`), epoch seconds (10 digits is
//! far below the blob threshold), clock times and IANA zone names
//! (`Europe/Warsaw` is not a path: only home-directory prefixes and `://`
//! URLs are treated as paths), URL scheme and host, `~/…` paths, and OpenAI
//! organisation/project ids (`org-…`, `proj_…`): they name an account, are not
//! credentials, and tell the user which account hit a quota.
//!
//! Every pattern is a `regex` crate automaton (linear time); callers bound
//! the input size first ([`super::Evidence::from_raw`]).

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
static KEY_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?i)\b(access_token|refresh_token|id_token|token|client_secret|x-api-key|x-goog-api-key|api[_-]?key|(?:aws_)?secret(?:_access)?(?:[_-]?key)?|password|passwd)(["']?\s*[:=]\s*["']?)(?:\[redacted:[a-z_]+\]|[^\s"',;&}\])]+)"#,
    )
});
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
    ))
});
static GOOGLE_OAUTH: LazyLock<Regex> = LazyLock::new(|| re(r"ya29\.[0-9A-Za-z_-]{10,}"));
static JWT_RE: LazyLock<Regex> =
    LazyLock::new(|| re(r"eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"));
static URL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?i)\b([a-z][a-z0-9+.-]{0,15}://)(?:[^/\s?#"'<>\\\[\]]*@)?([^/\s?#@:"'<>\\\[\]]*(?::[0-9]{1,5})?)([/?#][^\s"'<>\\)\[\]}]*)?"#,
    )
});
static EMAIL_RE: LazyLock<Regex> =
    LazyLock::new(|| re(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"));
static UNIX_HOME: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(^|[^A-Za-z0-9_.~/-])(?:/[A-Za-z])?/(?:(?:home|Users)/[^\s/"'`:;,)\]}]+|root\b)(?:/[^\s"'`:;,)\]}]*)?"#,
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
    let text = URL.replace_all(text, url);
    let text = AUTH_HEADER.replace_all(&text, auth_header);
    let text = redact_credentials_after_scheme(&text);
    let text = COOKIE_FIELD.replace_all(&text, cookie);
    let text = KEY_VALUE.replace_all(&text, key_value);
    let text = PROVIDER_KEY.replace_all(&text, API_KEY);
    let text = GOOGLE_OAUTH.replace_all(&text, TOKEN);
    let text = JWT_RE.replace_all(&text, JWT);
    let text = EMAIL_RE.replace_all(&text, EMAIL);
    let text = WINDOWS_HOME.replace_all(&text, PATH);
    let text = UNIX_HOME.replace_all(&text, |c: &Captures| format!("{}{PATH}", &c[1]));
    let text = BLOB_RE.replace_all(&text, blob);
    text.into_owned()
}

fn auth_header(c: &Captures) -> String {
    match c.get(3) {
        Some(scheme) => format!("{}{}{} {TOKEN}", &c[1], &c[2], scheme.as_str()),
        None => format!("{}{}{TOKEN}", &c[1], &c[2]),
    }
}

/// A bare `Bearer`/`Basic` credential is only redacted when it looks like
/// one (long enough and not a plain word), so prose like "Basic
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
        if credential.len() >= 12 && !credential.bytes().all(|b| b.is_ascii_alphabetic()) {
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

fn cookie(c: &Captures) -> String {
    let quoted = c.get(3).is_some();
    let (open, close) = if quoted { ("\"", "\"") } else { ("", "") };
    format!("{}{}{open}{COOKIE}{close}", &c[1], &c[2])
}

fn key_value(c: &Captures) -> String {
    let name = c[1].to_ascii_lowercase();
    let marker = if name.contains("secret") || name.starts_with("pass") {
        SECRET
    } else if name.ends_with("token") {
        TOKEN
    } else {
        API_KEY
    };
    format!("{}{}{marker}", &c[1], &c[2])
}

/// Keeps scheme and host, drops user info, replaces path and query with
/// `/[path]`; sentence punctuation after the URL is kept.
fn url(c: &Captures) -> String {
    let scheme = &c[1];
    let host = &c[2];
    let Some(rest) = c.get(3).map(|m| m.as_str()) else {
        return format!("{scheme}{host}");
    };
    let body = rest.trim_end_matches(['.', ',', ':', ';', '!', '?']);
    let tail = &rest[body.len()..];
    if body == "/" || body.is_empty() {
        return format!("{scheme}{host}{body}{tail}");
    }
    format!("{scheme}{host}/{PATH}{tail}")
}

fn blob(c: &Captures) -> Cow<'static, str> {
    let run = c.get(0).map_or("", |m| m.as_str());
    if run.bytes().any(|b| b.is_ascii_digit()) {
        Cow::Borrowed(BLOB)
    } else {
        Cow::Owned(run.to_owned())
    }
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
