#!/usr/bin/env bash
# Saves screenshots of the real app window at desktop size (1280x820) and at
# phone size (390x844), light and dark (`-dark.png`), into docs/screenshots/
# (or $1).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
out="${1:-docs/screenshots}"
npm --prefix ui run build --silent
cargo build -p recourse-app
xvfb-run -a -s "-screen 0 1400x900x24" dbus-run-session -- node ui/tests/e2e/screenshot.mjs "$out"
