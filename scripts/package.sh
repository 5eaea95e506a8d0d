#!/usr/bin/env bash
# Builds the installable Debian package with Tauri's bundler (release build of
# recourse-app, UI built by tauri.conf.json's beforeBuildCommand) and prints
# where the .deb is. Install it with `apt-get install ./<that path>`.
#
# The Tauri CLI is the one pinned in ui/package.json (@tauri-apps/cli, the
# same Rust CLI shipped as a native binary in an npm package): README
# "Packaging" says why not `cargo install tauri-cli`.
#
# The CLI treats the folder that holds tauri.conf.json as the app crate. Ours
# sits at the repository root (beside src-tauri/, where build.rs and
# generate_context! read it), and the root Cargo.toml is the engine crate, so
# for the bundler this script writes src-tauri/tauri.conf.json: the root
# config with its paths made relative to src-tauri/. It is generated,
# git-ignored and removed again; the root file stays the only one edited.
#
#   bash scripts/package.sh           # release build: the package to ship
#   bash scripts/package.sh --debug   # the debug build the tests use, packaged
#                                     # the same way (CI's quick package check)
set -euo pipefail
cd "$(dirname "$0")/.."
profile=release flags=()
if [ "${1:-}" = "--debug" ]; then profile=debug flags=(--debug); fi
root="$PWD"
export PATH="$HOME/.cargo/bin:$PATH"
[ "${RECOURSE_SKIP_SETUP:-}" = 1 ] || bash scripts/setup.sh

gen=src-tauri/tauri.conf.json
if git ls-files --error-unmatch "$gen" >/dev/null 2>&1; then
  echo "package: $gen is tracked by git; this script only manages a generated one" >&2
  exit 1
fi
trap 'rm -f "$root/$gen"' EXIT
node - "$root" <<'EOF'
const fs = require("node:fs");
const root = process.argv[2];
const c = JSON.parse(fs.readFileSync(`${root}/tauri.conf.json`, "utf8"));
// Paths in the root file are relative to the root; the bundler resolves them
// from src-tauri/.
c.build.frontendDist = `../${c.build.frontendDist}`;
c.build.beforeBuildCommand = { script: c.build.beforeBuildCommand, cwd: root };
c.bundle.icon = c.bundle.icon.map((p) => p.replace(/^src-tauri\//, ""));
fs.writeFileSync(`${root}/src-tauri/tauri.conf.json`, JSON.stringify(c, null, 2) + "\n");
EOF

target_dir="${CARGO_TARGET_DIR:-$root/target}"
start=$SECONDS
(cd src-tauri && TAURI_APP_PATH=. "$root/ui/node_modules/.bin/tauri" build "${flags[@]}" --bundles deb --ci)
version=$(node -p 'require("./tauri.conf.json").version')
deb=$(ls -t "$target_dir/$profile"/bundle/deb/*_"${version}"_*.deb | head -1)
echo
echo "package: built in $((SECONDS - start)) s: $deb"
echo "package: install with: apt-get install $deb"
