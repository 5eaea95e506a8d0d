#!/usr/bin/env bash
# Installs what is missing, builds a release binary, and opens Recourse. The
# database is $RECOURSE_DB, or ~/.local/share/recourse/recourse.db; a demo
# profile on the simulated provider is created on first start.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
bash scripts/setup.sh
npm --prefix ui run build --silent
# A release build: the app you use is optimised like the installed package
# (scripts/package.sh). The first one compiles every dependency with
# optimisations and takes several minutes on 2 cores (see README); later
# launches rebuild only what changed. The debug build that the tests and
# scripts/screenshot.sh use lives beside it in target/debug.
app="${CARGO_TARGET_DIR:-target}/release/recourse-app"
[ -x "$app" ] || echo "launch: first release build of the app; this takes several minutes" >&2
if [ -t 2 ]; then
  cargo build --release -p recourse-app  # cargo draws its own progress bar
else
  # No terminal, so no progress bar: say every minute that it is still going.
  cargo build --release -p recourse-app &
  build=$!
  (
    trap 'kill "$nap" 2>/dev/null; exit 0' TERM
    m=0
    while :; do
      sleep 60 & nap=$!
      wait "$nap"
      m=$((m + 1)); echo "launch: still building... $m min" >&2
    done
  ) &
  ticker=$!
  rc=0; wait "$build" || rc=$?
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  [ "$rc" = 0 ] || exit "$rc"
fi
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "launch: no display found; starting under Xvfb (use scripts/screenshot.sh to look at it)" >&2
  exec xvfb-run -a -s "-screen 0 1400x900x24" dbus-run-session -- "$app" "$@"
fi
exec "$app" "$@"
