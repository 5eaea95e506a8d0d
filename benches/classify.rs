//! Classifications per second on realistic 4 KiB evidence, next to the cost
//! of one raw regex scan over the same bytes, and the cost of sanitizing the
//! raw evidence first (what every failed attempt pays before classifying).
//!
//! Run: `cargo bench --bench classify` (about 30 s). Figures go in docs/catalogue.md.

use std::hint::black_box;
use std::time::Duration;

use chrono_tz::Tz;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use regex::Regex;

use recourse::catalogue::classify;
use recourse::evidence::{Evidence, Provider, RawEvidence, MAX_MESSAGE_BYTES};

const RETRY: &str = "  ⎿  API Error (529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}) · Retrying in 5 seconds… (attempt 4/10)\n";
const STACK: &str = "    at BS.makeRequest (file:///opt/homebrew/lib/node_modules/@anthropic-ai/claude-code/cli.js:1279:5315)\n    at process.processTicksAndRejections (node:internal/process/task_queues:105:5)\n";

/// Fills `tail` up to about 4 KiB with retry progress and stack frames before it.
fn four_kib(provider: Provider, tail: &str) -> Evidence {
    Evidence::from_raw(raw_four_kib(provider, tail))
}

fn raw_four_kib(provider: Provider, tail: &str) -> RawEvidence {
    let mut text = String::new();
    while text.len() + RETRY.len() + STACK.len() + tail.len() < MAX_MESSAGE_BYTES {
        text.push_str(RETRY);
        text.push_str(STACK);
    }
    text.push_str(tail);
    let occurred_at = "2026-01-15T12:00:00Z".parse().expect("valid instant");
    RawEvidence::new(provider, text, occurred_at).with_exit_code(1)
}

/// Both groups use the same settings so their per-evidence figures compare.
fn per_evidence_group<'c>(
    c: &'c mut Criterion,
    name: &str,
) -> criterion::BenchmarkGroup<'c, criterion::measurement::WallTime> {
    let mut group = c.benchmark_group(name);
    group
        .throughput(Throughput::Elements(1))
        .sample_size(50)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    group
}

fn bench(c: &mut Criterion) {
    let cases = [
        ("claude_code_529_after_retries", four_kib(Provider::ClaudeCode, "API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n")),
        ("codex_usage_limit", four_kib(Provider::Codex, "■ You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in 5 days 22 hours 11 minutes.\n")),
        ("generic_unknown", four_kib(Provider::Generic, "Error: something went wrong\n")),
    ];
    let mut group = per_evidence_group(c, "classify_4kib");
    for (name, evidence) in &cases {
        group.bench_function(*name, |b| b.iter(|| classify(black_box(evidence), Tz::UTC)));
    }
    group.finish();

    let raw = raw_four_kib(Provider::ClaudeCode, "API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n");
    let mut group = per_evidence_group(c, "sanitize_4kib");
    group.bench_function("claude_code_529_after_retries", |b| {
        b.iter(|| Evidence::from_raw(black_box(raw.clone())))
    });
    group.finish();

    let single = Regex::new(r"\btype\W{1,8}overloaded_error\b").expect("valid pattern");
    let mut group = per_evidence_group(c, "single_regex_scan_4kib");
    for (name, evidence) in &cases {
        group.bench_function(*name, |b| {
            b.iter(|| single.find_iter(black_box(&evidence.message)).count())
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
