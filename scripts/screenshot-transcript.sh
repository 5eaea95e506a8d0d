#!/usr/bin/env bash
# Saves docs/screenshots/transcript-{desktop,phone}.png (or into $1): a real
# Claude Code run at access `edit` against the loopback mock, in the sandbox
# of tests/live/sandbox.sh, shown in the real app window.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
out="$(realpath -m "${1:-docs/screenshots}")"
npm --prefix ui run build --silent
cargo build -p recourse --bin recourse
cargo build -p recourse-app
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
bash tests/live/sandbox.sh write_file "$work" -- \
  xvfb-run -a -s "-screen 0 1400x900x24" dbus-run-session -- \
  node "$PWD/ui/tests/e2e/screenshot-transcript.mjs" "$out"
