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

# The adapters' command lines (each kind's descriptor in src/agent/kinds/); the replayer
# refuses to run with any other arguments, so a drift fails the fast tests.
ARGV = {
    "claude": ["--output-format", "stream-json", "--verbose", "-p", PROMPT],
    "codex": ["exec", "--json", PROMPT],
    "gemini": ["--output-format", "stream-json", "-p", PROMPT],
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


SECRETS = ["sk-ant-api03-mockkey-000000000000", "sk-ant-oat01-mockkey-000000000000", "sk-mock-000000000000",
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


def clock_forms(t):
    """The ways the CLIs print a reset clock time (UTC here): Claude Code
    `1:37pm`, Codex `1:37 PM`, and 24-hour `13:37`."""
    h12 = t.hour % 12 or 12
    ampm = "am" if t.hour < 12 else "pm"
    return {"CLOCK12": f"{h12}:{t.minute:02d}{ampm}",
            "CLOCK12SP": f"{h12}:{t.minute:02d} {ampm.upper()}",
            "CLOCK24": f"{t.hour:02d}:{t.minute:02d}"}


def resets(text, mock_started):
    """Reset instants the mock sent (offsets from its start) become
    placeholders the replayer fills in relative to its own start:
    {{EPOCH+N}}, {{RFC3339+N}} and the clock forms, e.g. {{CLOCK12+N}}."""
    if mock_started is None:
        return text
    sys.path.insert(0, str(ROOT / "tests" / "live"))
    import mock_provider as m
    for offset in (m.RESET_SOON_S, m.RESET_FAR_S, 12):
        at = mock_started + offset
        text = text.replace(str(int(at)), "{{EPOCH+%d}}" % offset)
        iso = datetime.fromtimestamp(int(at), timezone.utc).isoformat().replace("+00:00", "Z")
        text = text.replace(iso, "{{RFC3339+%d}}" % offset)
        # Minute precision: the CLI may have truncated or rounded.
        for t in (at, at + 60):
            for name, form in clock_forms(datetime.fromtimestamp(t, timezone.utc)).items():
                text = re.sub(r"(?<![\d:])" + re.escape(form) + r"(?![\d:])",
                              "{{%s+%d}}" % (name, offset), text)
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
        started_file = work / "mock.port.started"
        mock_started = float(started_file.read_text()) if started_file.exists() else None
        out = resets(scrub(p.stdout.decode("utf-8", "replace"), work, port), mock_started)
        err = resets(scrub(p.stderr.decode("utf-8", "replace"), work, port), mock_started)
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
