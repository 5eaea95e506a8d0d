#!/usr/bin/env bash
# Saves docs/screenshots/transcript-{desktop,phone}.png and
# continue-{desktop,phone}.png (or into $1): real Claude Code runs at access
# `edit` against the loopback mock, in the sandbox of tests/live/sandbox.sh,
# shown in the real app window (ui/tests/e2e/screenshot-transcript.mjs).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
out="$(realpath -m "${1:-docs/screenshots}")"
npm --prefix ui run build --silent
cargo build -p recourse --bin recourse
cargo build -p recourse-app
# Lowercase and digits only: the sanitizer keeps a path of such parts, and
# would take mktemp's mixed-case name joined to the rest for an opaque blob.
work="/tmp/recourse-screenshots-$$"
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
for shot in transcript:write_file continue:tool_then_error; do
  bash tests/live/sandbox.sh "${shot#*:}" "$work/${shot%%:*}" -- \
    xvfb-run -a -s "-screen 0 1400x900x24" dbus-run-session -- \
    node "$PWD/ui/tests/e2e/screenshot-transcript.mjs" "$out" "${shot%%:*}"
done
