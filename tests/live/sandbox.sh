#!/usr/bin/env bash
# Runs a command in a sealed sandbox for the real agent CLIs:
#   sandbox.sh SCENARIO WORKDIR -- COMMAND [ARG...]
#
# - a fresh network namespace (`unshare -rn`, loopback up): nothing but
#   127.0.0.1 inside it can be reached, by construction;
# - the mock provider (mock_provider.py) answering with SCENARIO on a free
#   loopback port, or, for `no_listener`, nothing on that port at all;
# - a fresh HOME / XDG dirs / TMPDIR / CODEX_HOME under WORKDIR with each CLI's
#   documented config pointing at the mock with a fake key and its own
#   retries turned down (../shared/REAL-CLIS.md);
# - WORKDIR/repo, a git repository (Codex refuses to run elsewhere), as the
#   working directory.
# COMMAND inherits that environment (a CLI directly, or `recourse run`, whose
# candidates inherit it in turn). The mock is stopped when COMMAND ends, and the
# exit code is COMMAND's. WORKDIR/mock.log lists every request the mock saw.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

if [ "${RECOURSE_SANDBOX_INSIDE:-}" != 1 ]; then
  export RECOURSE_SANDBOX_INSIDE=1
  exec unshare -rn bash "$here/sandbox.sh" "$@"
fi

scenario=$1 work=$2
shift 2
[ "${1:-}" = "--" ] && shift
ip link set lo up
mkdir -p "$work"
work="$(cd "$work" && pwd)"

port_file="$work/mock.port"
rm -f "$port_file"
mock_pid=""
if [ "$scenario" = no_listener ]; then
  port=47019 # a fresh namespace: nothing listens anywhere
else
  python3 "$here/mock_provider.py" --scenario "$scenario" --log "$work/mock.log" \
    --port-file "$port_file" --workdir "$work/repo" >/dev/null &
  mock_pid=$!
  for _ in $(seq 200); do [ -s "$port_file" ] && break; sleep 0.05; done
  port=$(cat "$port_file")
fi
stop_mock() { [ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null; wait 2>/dev/null || true; }
trap stop_mock EXIT
base="http://127.0.0.1:$port"

export HOME="$work/home" TMPDIR="$work/tmp" TZ=UTC
export XDG_CONFIG_HOME="$HOME/.config" XDG_DATA_HOME="$HOME/.local/share"
export XDG_CACHE_HOME="$HOME/.cache" XDG_STATE_HOME="$HOME/.local/state"
mkdir -p "$HOME" "$TMPDIR" "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$XDG_STATE_HOME"

# Claude Code
export ANTHROPIC_BASE_URL="$base" ANTHROPIC_API_KEY="sk-ant-api03-mockkey-000000000000"
export CLAUDE_CODE_MAX_RETRIES=1 DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 \
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_ERROR_REPORTING=1
if [ "${scenario#usage_limit}" != "$scenario" ]; then
  # Usage windows belong to subscriptions: log in the way a subscriber does.
  unset ANTHROPIC_API_KEY
  export CLAUDE_CODE_OAUTH_TOKEN="sk-ant-oat01-mockkey-000000000000"
fi
cat >"$HOME/.claude.json" <<'EOF'
{"hasCompletedOnboarding": true, "autoUpdates": false, "bypassPermissionsModeAccepted": true}
EOF

# Codex. No sandbox_mode here: the command line's --sandbox decides the
# access level (docs/agents.md), and without it `codex exec` is read-only.
export CODEX_HOME="$HOME/.codex" MOCK_OPENAI_KEY="sk-mock-000000000000"
mkdir -p "$CODEX_HOME"
cat >"$CODEX_HOME/config.toml" <<EOF
model = "gpt-5"
model_provider = "mock"
approval_policy = "never"

[model_providers.mock]
name = "mock"
base_url = "$base/v1"
env_key = "MOCK_OPENAI_KEY"
wire_api = "responses"
request_max_retries = 1
stream_max_retries = 1
stream_idle_timeout_ms = 5000

[features]
unbounded_connection_retries = false
EOF

# Gemini CLI
export GOOGLE_GEMINI_BASE_URL="$base" GEMINI_API_KEY="mock-gemini-key-000000000000"
export GEMINI_CLI_TRUST_WORKSPACE=true GEMINI_CLI_NO_RELAUNCH=true
mkdir -p "$HOME/.gemini"
cat >"$HOME/.gemini/settings.json" <<'EOF'
{"security": {"auth": {"selectedType": "gemini-api-key"}},
 "general": {"maxAttempts": 2, "disableAutoUpdate": true},
 "model": {"name": "gemini-2.5-pro"},
 "privacy": {"usageStatisticsEnabled": false},
 "telemetry": {"enabled": false}}
EOF

# OpenCode. No "permission" here: its defaults and what Recourse passes decide
# the access level (docs/agents.md).
export OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_MODELS_FETCH=1 \
  OPENCODE_DISABLE_LSP_DOWNLOAD=1 OPENCODE_DISABLE_DEFAULT_PLUGINS=1
mkdir -p "$XDG_CONFIG_HOME/opencode"
cat >"$XDG_CONFIG_HOME/opencode/opencode.json" <<EOF
{"\$schema": "https://opencode.ai/config.json",
 "model": "anthropic/claude-sonnet-4-5",
 "autoupdate": false, "share": "disabled",
 "provider": {"anthropic": {"options": {"baseURL": "$base/v1", "apiKey": "sk-ant-api03-mockkey-000000000000"}}}}
EOF

mkdir -p "$work/repo"
if [ ! -d "$work/repo/.git" ]; then
  git -C "$work/repo" init -q
  git -C "$work/repo" -c user.email=t@example.invalid -c user.name=t \
    commit -q --allow-empty -m init
fi
cd "$work/repo"
export RECOURSE_MOCK_PORT="$port"
set +e
"$@"
rc=$?
set -e
exit $rc
