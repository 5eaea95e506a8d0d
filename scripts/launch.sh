#!/usr/bin/env bash
# Installs what is missing, builds, and opens Recourse. The database is
# $RECOURSE_DB, or ~/.local/share/recourse/recourse.db; a demo profile on the
# simulated provider is created on first start.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
bash scripts/setup.sh
npm --prefix ui run build --silent
cargo build -p recourse-app
app="${CARGO_TARGET_DIR:-target}/debug/recourse-app"
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "launch: no display found; starting under Xvfb (use scripts/screenshot.sh to look at it)" >&2
  exec xvfb-run -a -s "-screen 0 1400x900x24" dbus-run-session -- "$app" "$@"
fi
exec "$app" "$@"
