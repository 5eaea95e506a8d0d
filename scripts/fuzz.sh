#!/usr/bin/env bash
# Runs every fuzz target in fuzz/ for a bounded time, one after another, on
# the stable toolchain: scripts/fuzz.sh [seconds per target, default 60]
# [target ...] (default: every target).
#
# cargo-fuzz needs nightly-only compiler flags (-Zsanitizer, coverage
# instrumentation); RUSTC_BOOTSTRAP=1 lets stable rustc accept them, so no
# nightly toolchain is downloaded. AddressSanitizer is used when a test build
# with it succeeds, otherwise the script says so and runs without a sanitizer.
#
# Each target's corpus (fuzz/corpus/<target>/, gitignored) is seeded from the
# project's fixtures and kept regression inputs. A crash input lands in
# fuzz/artifacts/<target>/; fix the bug, then copy the input into
# fuzz/regressions/<target>/ so `cargo test --test it fuzz_regressions::` replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
export RUSTC_BOOTSTRAP=1

all_targets=(evidence_from_raw hint_from_text sanitize policy_document policy_structured)
usage="usage: scripts/fuzz.sh [seconds per target, default 60] [target ...] (${all_targets[*]})"
seconds="${1:-60}"
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
    echo "$usage" >&2
    exit 2
fi
shift || true
targets=("${@:-${all_targets[@]}}")
for target in "${targets[@]}"; do
    if [[ " ${all_targets[*]} " != *" $target "* ]]; then
        echo "unknown target $target; $usage" >&2
        exit 2
    fi
done

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "==> installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi

# Seeds: catalogue fixture texts for the text targets (prefixed with an 8-byte
# little-endian instant for hint_from_text), policy documents for the policy
# targets (followed by a NUL for policy_structured, whose mutation operations
# come after it), and every kept regression input.
seed() {
    local target="$1" dir="fuzz/corpus/$1" file i=0
    mkdir -p "$dir"
    case "$target" in
        evidence_from_raw | sanitize)
            for file in fixtures/catalogue/*/*.toml; do cp "$file" "$dir/fixture-$((i++))"; done ;;
        hint_from_text)
            # 1749923766 = 2025-06-14T17:56:06Z, little-endian.
            for file in fixtures/catalogue/*/*.toml; do
                { printf '\xb6\xb7\x4d\x68\x00\x00\x00\x00'; cat "$file"; } >"$dir/fixture-$((i++))"
            done ;;
        policy_document)
            for file in fixtures/policy/*.json; do cp "$file" "$dir/fixture-$((i++))"; done ;;
        policy_structured)
            for file in fixtures/policy/*.json; do
                { cat "$file"; printf '\0'; } >"$dir/fixture-$((i++))"
            done ;;
    esac
    if [ -d "fuzz/regressions/$target" ]; then
        for file in "fuzz/regressions/$target"/*; do cp "$file" "$dir/regression-$(basename "$file")"; done
    fi
}

max_len() {
    case "$1" in
        evidence_from_raw) echo 200000 ;; # beyond the 80 KiB head + tail bound
        sanitize) echo 16384 ;;
        *) echo 4096 ;;
    esac
}

sanitizer=address
if ! cargo fuzz build --release --sanitizer address "${targets[0]}" >/dev/null 2>fuzz/build.log; then
    echo "AddressSanitizer build failed (see fuzz/build.log); fuzzing with --sanitizer none" >&2
    sanitizer=none
fi

declare -A result execs
failed=0
for target in "${targets[@]}"; do
    seed "$target"
    log="fuzz/$target.log"
    echo "==> $target for ${seconds}s (sanitizer: $sanitizer)"
    if cargo fuzz run --release --sanitizer "$sanitizer" "$target" -- \
        -max_total_time="$seconds" -max_len="$(max_len "$target")" -timeout=30 \
        -print_final_stats=1 >"$log" 2>&1; then
        result[$target]=ok
    else
        result[$target]="FAILED (see $log and fuzz/artifacts/$target/)"
        failed=1
    fi
    execs[$target]=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    echo "    executions: ${execs[$target]:-?}   result: ${result[$target]}"
done

echo
printf '%-20s %14s  %s\n' target executions result
for target in "${targets[@]}"; do
    printf '%-20s %14s  %s\n' "$target" "${execs[$target]:-?}" "${result[$target]}"
done
exit "$failed"
