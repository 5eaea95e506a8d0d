#!/usr/bin/env python3
"""Records what the pinned, unmodified agent CLIs print for each provider scenario.

    python3 tests/live/record.py [CLI ...] [--scenario NAME ...]

For every CLI × scenario it runs the real CLI from agents/node_modules inside
tests/live/sandbox.sh (own network namespace, the loopback mock answering with
that scenario, fresh HOME) with exactly the command line Recourse's adapter
uses, and keeps its stdout, stderr and exit code under
fixtures/agents/recorded/<cli>-<version>/<scenario>/. Machine paths, the mock
port and the fake keys are scrubbed; reset instants the mock sent are written
as placeholders the replayer fills in relative to its own start, so a replay
months later still sees a future reset at the recorded distance.

A CLI still running after the scenario's limit is killed and recorded as
`hung = true`: the replayer then keeps running after its output, as the CLI
did.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "agents" / "node_modules" / ".bin"
OUT = ROOT / "fixtures" / "agents" / "recorded"
SANDBOX = ROOT / "tests" / "live" / "sandbox.sh"

PROMPT = "Reply with the single word done."

# The adapters' command lines (src/runner/adapters/mod.rs); the replayer
# refuses to run with any other arguments, so a drift fails the fast tests.
ARGV = {
    "claude": ["--output-format", "stream-json", "--verbose", "-p", PROMPT],
    "codex": ["exec", "--json", PROMPT],
    "gemini": ["--output-format", "json", "-p", PROMPT],
    "opencode": ["run", "--format", "json", PROMPT],
}
PACKAGE = {
    "claude": "@anthropic-ai/claude-code",
    "codex": "@openai/codex",
    "gemini": "@google/gemini-cli",
    "opencode": "opencode-ai",
}
SCENARIOS = ["ok", "rate_limited", "usage_limit", "quota_day", "overloaded", "server_error",
             "unavailable", "unauthorized", "forbidden", "credit_balance", "model_not_found",
             "cut_stream", "tool_then_error", "no_listener"]
LIMIT_S = 150


def version(cli):
    pkg = json.loads((ROOT / "agents" / "package.json").read_text())
    return pkg["dependencies"][PACKAGE[cli]]


SECRETS = ["sk-ant-api03-mockkey-000000000000", "sk-mock-000000000000",
           "mock-gemini-key-000000000000"]


def scrub(text, work, port):
    text = text.replace(str(work), "$WORK")
    text = text.replace(str(ROOT / "agents" / "node_modules"), "$AGENTS")
    text = text.replace(str(ROOT), "$REPO")
    text = text.replace(f"127.0.0.1:{port}", "127.0.0.1:$PORT")
    text = text.replace(f"localhost:{port}", "localhost:$PORT")
    for s in SECRETS:
        text = text.replace(s, "$FAKE_KEY")
    # Session and request ids vary per run; they carry nothing the adapters read.
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
                  "00000000-0000-4000-8000-000000000000", text)
    return text


def resets(text, started):
    """Replace the reset instants the mock sent (epoch seconds, offsets of
    RESET_SOON_S / RESET_FAR_S from its start) with {{NOW+Ns}} placeholders."""
    sys.path.insert(0, str(ROOT / "tests" / "live"))
    import mock_provider as m
    for offset in (m.RESET_SOON_S, m.RESET_FAR_S, 12):
        for drift in range(-2, 4):
            e = int(started) + offset + drift
            text = text.replace(str(e), "{{EPOCH+%d}}" % offset)
    return text


def record(cli, scenario):
    ver = version(cli)
    dest = OUT / f"{cli}-{ver}" / scenario
    with tempfile.TemporaryDirectory(prefix=f"rec-{cli}-{scenario}-") as tmp:
        work = Path(tmp)
        cmd = ["bash", str(SANDBOX), scenario, str(work), "--",
               "timeout", "-k", "5", str(LIMIT_S), str(BIN / cli)] + ARGV[cli]
        started = time.time()
        p = subprocess.run(cmd, capture_output=True, stdin=subprocess.DEVNULL)
        elapsed = time.time() - started
        port_file = work / "mock.port"
        port = port_file.read_text().strip() if port_file.exists() else "47019"
        log = (work / "mock.log").read_text() if (work / "mock.log").exists() else ""
        hung = p.returncode in (124, 137)
        out = resets(scrub(p.stdout.decode("utf-8", "replace"), work, port), started)
        err = resets(scrub(p.stderr.decode("utf-8", "replace"), work, port), started)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    (dest / "stdout").write_text(out)
    (dest / "stderr").write_text(err)
    (dest / "requests.jsonl").write_text(log)
    meta = {
        "cli": cli,
        "package": PACKAGE[cli],
        "version": ver,
        "scenario": scenario,
        "argv": ARGV[cli],
        "exit_code": None if hung else p.returncode,
        "hung": hung,
        "elapsed_s": round(elapsed, 1),
        "recorded_at": datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
        "source": "tests/live/record.py: the real CLI against tests/live/mock_provider.py "
                  "in tests/live/sandbox.sh",
    }
    (dest / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    print(f"{cli:8} {scenario:16} exit={meta['exit_code']} hung={hung} {elapsed:.1f}s",
          flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("clis", nargs="*", default=list(ARGV))
    ap.add_argument("--scenario", action="append", dest="scenarios")
    args = ap.parse_args()
    for cli in args.clis:
        if cli not in ARGV:
            sys.exit(f"unknown CLI {cli!r}; one of {', '.join(ARGV)}")
        if not (BIN / cli).exists():
            sys.exit(f"{BIN / cli} is missing: run scripts/setup.sh first")
    scenarios = args.scenarios or SCENARIOS

    def one_cli(cli):
        for s in scenarios:
            record(cli, s)

    with ThreadPoolExecutor(max_workers=len(args.clis)) as pool:
        list(pool.map(one_cli, args.clis))


if __name__ == "__main__":
    main()
