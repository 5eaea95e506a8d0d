#!/usr/bin/env bash
# App cold start to first paint, resident memory, and the time each list
# filter and search takes to paint, with a populated database (issues 7
# and 17; figures in BENCHMARKS.md). Builds the app, writes a database of
# $APP_DB_ROUTES (100 000) routes in the realistic mix with the engine
# bench, then starts the real app $RUNS (5) times under Xvfb.
# BUILD=release (default) measures what ships: about 10 min to build the
# first time, 1 min after. BUILD=debug measures the debug build instead.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
bash scripts/setup.sh
npm --prefix ui run build --silent
build="${BUILD:-release}"
case "$build" in
  release) cargo_profile=release; out=release ;;
  debug) cargo_profile=dev; out=debug ;;
  *) echo "bench-app: BUILD must be release or debug, got $build" >&2; exit 2 ;;
esac
cargo build --profile "$cargo_profile" -p recourse-app
target="${CARGO_TARGET_DIR:-$PWD/target}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export APP_DB="$work/routes.db" APP_DB_ROUTES="${APP_DB_ROUTES:-100000}"
cargo bench --profile "$cargo_profile" --bench engine -- app-db
export RECOURSE_APP_BINARY="$target/$out/recourse-app"
xvfb-run -a -s "-screen 0 1400x900x24" dbus-run-session -- node ui/tests/e2e/startup-bench.mjs
