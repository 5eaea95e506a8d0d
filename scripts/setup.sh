#!/usr/bin/env bash
# Installs everything Recourse needs on a fresh Debian 12 machine (run as root).
# Idempotent: each step checks first and does nothing when already satisfied.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(build-essential curl wget file pkg-config libssl-dev libwebkit2gtk-4.1-dev
  libxdo-dev libayatana-appindicator3-dev librsvg2-dev webkit2gtk-driver xvfb xauth
  fonts-dejavu-core chromium imagemagick x11-utils dbus-x11
  xdotool xclip  # the end-to-end tests answer the native file dialogs with them
  dbus-bin dbus-daemon python3 procps  # dbus-monitor sees the notification; wm-close.py; pgrep
  desktop-file-utils  # scripts/test-package.sh validates the .deb's desktop entry
  gnome-keyring libsecret-tools)  # tests/it/keyring.rs: a real Secret Service, read back by secret-tool

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing apt packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

export PATH="$HOME/.cargo/bin:$PATH"
# rust-toolchain.toml pins the toolchain by version. A machine whose rustup
# holds that release only as `stable` (and can fetch nothing) gets it linked
# under its version name; anywhere else rustup installs the pin on first use.
pinned=$(sed -n 's/^channel = "\(.*\)"/\1/p' rust-toolchain.toml)
toolchains="${RUSTUP_HOME:-$HOME/.rustup}/toolchains"
stable=$(ls -d "$toolchains"/stable-* 2>/dev/null | head -1 || true)
if [ -n "$stable" ] && [ ! -e "$toolchains/$pinned-${stable##*/stable-}" ] \
  && "$stable/bin/rustc" --version | grep -q "^rustc $pinned "; then
  echo "setup: linking the installed stable toolchain as $pinned"
  ln -s "${stable##*/}" "$toolchains/$pinned-${stable##*/stable-}"
fi
if ! command -v tauri-driver >/dev/null 2>&1; then
  echo "setup: installing tauri-driver"
  cargo install tauri-driver --locked
fi
if ! command -v cargo-machete >/dev/null 2>&1; then
  echo "setup: installing cargo-machete (unused-dependency check)"
  cargo install cargo-machete --version 0.9.2 --locked
fi

if [ ! -d ui/node_modules ] || [ ui/package-lock.json -nt ui/node_modules/.package-lock.json ]; then
  echo "setup: installing npm dependencies (from ui/package-lock.json)"
  (cd ui && npm ci --no-audit --no-fund)
fi
# The real agent CLIs the contract tests run, pinned in agents/package.json
# (versions) and agents/package-lock.json; each ships its binary in the package.
if [ ! -d agents/node_modules ] || [ agents/package-lock.json -nt agents/node_modules/.package-lock.json ]; then
  echo "setup: installing the pinned agent CLIs (from agents/package-lock.json)"
  # Not `npm ci`: opencode-ai lists a binary package per platform as optional,
  # and the lock can only hold the ones the registry serves here, which `npm ci`
  # rejects as out of sync. `npm install --no-save` installs the locked versions
  # (integrity-checked) and leaves the lock untouched.
  (cd agents && npm install --no-save --no-audit --no-fund)
fi
echo "setup: ok"
