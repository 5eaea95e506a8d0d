#!/usr/bin/env bash
# App cold start to first paint, resident memory, and the time each list
# filter and search takes to paint, with a populated database (issues 7
# and 17; figures in BENCHMARKS.md). Builds the app, writes a database of
# $APP_DB_ROUTES (100 000) routes in the realistic mix with the engine
# bench, then starts the real app $RUNS (5) times under Xvfb.
# BUILD=release (default) measures what ships: about 10 min to build the
# first time, 1 min after. BUILD=debug measures the debug build instead.
# RECOURSE_APP_BINARY=<path> runs that app as it is (no setup, no build: to
# compare two builds back to back). APP_DB=<path> keeps the database there:
# written when missing, else used as it is (each run on a copy), with
# APP_DB_ROUTES saying how many routes it holds.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
build="${BUILD:-release}"
case "$build" in
  release) cargo_profile=release; out=release ;;
  debug) cargo_profile=dev; out=debug ;;
  *) echo "bench-app: BUILD must be release or debug, got $build" >&2; exit 2 ;;
esac
target="${CARGO_TARGET_DIR:-$PWD/target}"
if [ -z "${RECOURSE_APP_BINARY:-}" ]; then
  bash scripts/setup.sh
  npm --prefix ui run build --silent
  cargo build --profile "$cargo_profile" -p recourse-app
  export RECOURSE_APP_BINARY="$target/$out/recourse-app"
fi
export APP_DB_ROUTES="${APP_DB_ROUTES:-100000}"
if [ -z "${APP_DB:-}" ]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  APP_DB="$work/routes.db"
fi
export APP_DB
[ -e "$APP_DB" ] || cargo bench --profile "$cargo_profile" --bench engine -- app-db
echo "bench-app: $(uptime)"
xvfb-run -a -s "-screen 0 1400x900x24" dbus-run-session -- node ui/tests/e2e/startup-bench.mjs
