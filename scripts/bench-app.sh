#!/usr/bin/env bash
# App cold start to first paint and resident memory with a populated
# database (issue 7; figures in BENCHMARKS.md). Builds the release app,
# writes a database of $APP_DB_ROUTES (1000) routes in the realistic mix with
# the engine bench, then starts the real app $RUNS (5) times under Xvfb.
# Takes about 10 min the first time (release build), 1 min after.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
bash scripts/setup.sh
npm --prefix ui run build --silent
cargo build --release -p recourse-app
target="${CARGO_TARGET_DIR:-$PWD/target}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export APP_DB="$work/routes.db" APP_DB_ROUTES="${APP_DB_ROUTES:-1000}"
cargo bench --bench engine -- app-db
export RECOURSE_APP_BINARY="$target/release/recourse-app"
xvfb-run -a -s "-screen 0 1400x900x24" dbus-run-session -- node ui/tests/e2e/startup-bench.mjs
