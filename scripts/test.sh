#!/usr/bin/env bash
# The whole suite, exactly what CI runs: setup, format, lint, Rust tests, UI
# type-check, format and tests, end-to-end tests in the real app window, then
# the Debian package installed and started (built from the debug binary; the
# release .deb is `bash scripts/test-package.sh`, the check before a release).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
export CARGO_TERM_COLOR=never
step() { printf '\n==> %s\n' "$*"; }

step "setup"
bash scripts/setup.sh

step "ui build (the desktop binary embeds ui/dist)"
npm --prefix ui run build --silent

step "cargo fmt --check"
cargo fmt --all --check

step "cargo clippy -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

step "unused dependencies (cargo machete)"
cargo machete

step "rust tests"
cargo test --workspace

step "ui type-check (svelte-check, TypeScript strict)"
npm --prefix ui run check --silent

step "ui format (prettier --check; bindings.ts is generated and ignored)"
npm --prefix ui run format:check --silent

step "ui tests (headless Chromium, mocked IPC)"
npm --prefix ui test --silent

step "end-to-end (real app window through tauri-driver under Xvfb)"
cargo build -p recourse-app
xvfb-run -a -s "-screen 0 1400x900x24" dbus-run-session -- node --test --test-concurrency=1 ui/tests/e2e/

step "package (the debug build as a .deb: apt-get install, start under Xvfb, read the window, remove)"
bash scripts/test-package.sh --debug

echo
echo "all checks passed"
