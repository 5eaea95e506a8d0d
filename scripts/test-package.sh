#!/usr/bin/env bash
# Install test of the Debian package, as a person would use it: builds the .deb
# (scripts/package.sh), installs it with apt-get, checks what it put on the
# system (binary, desktop entry, icons, metadata), starts the *installed*
# binary under Xvfb with a fresh HOME and XDG dirs, finds its window by title,
# saves a screenshot (artifacts/package/installed.png), reads the rendered
# page back through tauri-driver, and removes the package again.
#
#   bash scripts/test-package.sh            # release build, package, test:
#                                           # the check before a release
#   bash scripts/test-package.sh --debug    # the debug build, packaged the
#                                           # same way (about a minute; CI)
#   bash scripts/test-package.sh FILE.deb   # test a .deb built before
#
# Needs root (or sudo) for apt-get. A package of the same name that was
# installed before the test is left installed (at the tested version).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
export PATH="$HOME/.cargo/bin:$PATH"
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
step() { printf '\n==> package test: %s\n' "$*"; }

if [ "${1:-}" = "--inside-xvfb" ]; then
  # Second half, run by the first under xvfb-run + dbus-run-session.
  bin="$2" work="$3" out="$4"
  mkdir -p "$work/home" "$work/data" "$work/config" "$work/cache" "$work/runtime"
  chmod 700 "$work/runtime"
  app_env=(env -u RECOURSE_DB HOME="$work/home" XDG_DATA_HOME="$work/data"
    XDG_CONFIG_HOME="$work/config" XDG_CACHE_HOME="$work/cache" XDG_RUNTIME_DIR="$work/runtime")
  "${app_env[@]}" "$bin" >"$work/app.log" 2>&1 &
  app=$!
  trap 'kill "$app" 2>/dev/null || true; wait "$app" 2>/dev/null || true' EXIT
  win=""
  for _ in $(seq 1 60); do
    win=$(xdotool search --onlyvisible --name '^Recourse$' 2>/dev/null | head -1 || true)
    [ -n "$win" ] && break
    kill -0 "$app" 2>/dev/null || { echo "the installed app exited early:"; cat "$work/app.log"; exit 1; }
    sleep 0.5
  done
  [ -n "$win" ] || { echo "no window titled Recourse within 30 s"; cat "$work/app.log"; exit 1; }
  echo "window $win: \"$(xdotool getwindowname "$win")\", $(xdotool getwindowgeometry "$win" | tail -1 | xargs)"
  db="$work/data/recourse/recourse.db"
  for _ in $(seq 1 60); do [ -s "$db" ] && break; sleep 0.5; done
  [ -s "$db" ] || { echo "no database at $db (XDG_DATA_HOME not honoured?)"; cat "$work/app.log"; exit 1; }
  echo "first start created $db"
  # Give WebKit a moment to paint, then look at the screen: a window that
  # rendered nothing is one flat colour.
  sleep 4
  import -window root "$out"
  sd=$(convert "$out" -format '%[fx:standard_deviation]' info:)
  colors=$(convert "$out" -format '%k' info:)
  echo "screenshot $out: $colors colours, standard deviation $sd"
  awk -v sd="$sd" -v c="$colors" 'BEGIN { exit !(sd > 0.02 && c > 50) }' \
    || { echo "the screenshot looks blank"; exit 1; }
  kill "$app"; wait "$app" 2>/dev/null || true
  trap - EXIT
  # Read the page itself through WebDriver: the same installed binary on a
  # fresh database shows the seeded demo profile.
  RECOURSE_APP_BINARY="$bin" HOME="$work/home" node --test ui/tests/package/installed.test.mjs
  exit 0
fi

deb="" build_flags=()
case "${1:-}" in
  --debug) build_flags=(--debug) ;;
  "") ;;
  *) deb="$1" ;;
esac
if [ -z "$deb" ]; then
  step "build the .deb (scripts/package.sh ${build_flags[*]})"
  listing=$(mktemp)
  bash scripts/package.sh "${build_flags[@]}" | tee "$listing"
  deb=$(sed -n 's/^package: built in .*s: //p' "$listing"); rm -f "$listing"
else
  bash scripts/setup.sh
fi
[ -f "$deb" ] || { echo "no .deb at '$deb'" >&2; exit 1; }
deb=$(readlink -f "$deb")
pkg=$(dpkg-deb -f "$deb" Package)

step "metadata of $(basename "$deb")"
dpkg-deb -f "$deb" Package Version Architecture Section Depends Description
[ "$(dpkg-deb -f "$deb" Version)" = "$(node -p 'require("./tauri.conf.json").version')" ] \
  || { echo "package version differs from tauri.conf.json" >&2; exit 1; }

preinstalled=0
dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" && preinstalled=1
work=$(mktemp -d "${TMPDIR:-/tmp}/recourse-pkgtest.XXXXXX")
cleanup() {
  local rc=$?
  if [ "$preinstalled" = 0 ] && dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok"; then
    echo "package test: removing $pkg"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=120 remove --purge -y -qq "$pkg" >/dev/null || rc=1
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT

step "apt-get install $deb"
start=$SECONDS
DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=120 install -y -qq --no-install-recommends "$deb" >/dev/null
echo "installed $pkg in $((SECONDS - start)) s"

step "what the package installed"
dpkg -L "$pkg" | while read -r f; do [ -f "$f" ] && echo "$f"; done
bin=$(dpkg -L "$pkg" | grep -m1 '^/usr/bin/.')
[ -x "$bin" ] || { echo "no executable in /usr/bin" >&2; exit 1; }
desktop=$(dpkg -L "$pkg" | grep -m1 '^/usr/share/applications/.*\.desktop$')
[ -n "$desktop" ] || { echo "no desktop entry" >&2; exit 1; }
cat "$desktop"
desktop-file-validate "$desktop"
grep -qx "Exec=$(basename "$bin")" "$desktop" || grep -q "^Exec=$bin" "$desktop" \
  || { echo "the desktop entry does not start $bin" >&2; exit 1; }
icon=$(sed -n 's/^Icon=//p' "$desktop")
dpkg -L "$pkg" | grep -q "^/usr/share/icons/hicolor/.*/apps/$icon\.png$" \
  || { echo "no hicolor icon named $icon" >&2; exit 1; }

step "start $bin under Xvfb with a fresh HOME and XDG dirs"
mkdir -p artifacts/package
xvfb-run -a -s "-screen 0 1400x900x24" dbus-run-session -- \
  bash "$root/scripts/test-package.sh" --inside-xvfb "$bin" "$work" "$root/artifacts/package/installed.png"

echo
echo "package test passed"
