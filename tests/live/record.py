#!/usr/bin/env python3
"""Records what the pinned, unmodified agent CLIs print for each provider scenario.

    python3 tests/live/record.py [CLI ...] [--scenario NAME ...]
    python3 tests/live/record.py [CLI ...] --next [--only NAME ...]

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

`--next` records the access levels and session resume (docs/agents.md) under
fixtures/agents/recorded-next/<cli>-<version>/<name>/, with the command lines
laid out as the adapters are to build them: the CLI's fixed output flags, the
access flags, then the session flags and the message. Each `write_file.LEVEL`
runs the `write_file` scenario at one access level; `resume.first` runs
`tool_then_error` and `resume.continue` resumes the session id the first run
printed, in the same HOME and working directory, with a continuation message;
`resume.unknown` resumes an id the CLI never made. The session id a run
printed is written as 00000000-0000-4000-8000-000000000001 (OpenCode's as
ses_00000000000000000000000001) wherever it appears (stdout, stderr, argv);
other UUIDs as ...-000000000000 as before.
meta.json adds `env` (variables given on top of the sandbox's: part of the
access level where a CLI has no flag for it), `worktree_after` (`git status
--porcelain` of the working directory after the run) and, for a resume, the
recording it continues.
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
OUT_NEXT = ROOT / "fixtures" / "agents" / "recorded-next"
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


# --- access levels and session resume (--next) ---------------------------------

# Each CLI's command line: its fixed output flags, the access flags, the
# session flags, the message. (`--model` and a candidate's extra arguments,
# when set, go between the access flags and the session flags.)
OUTPUT_FLAGS = {
    "claude": ["--output-format", "stream-json", "--verbose"],
    "codex": ["exec", "--json"],
    "gemini": ["--output-format", "stream-json"],
    "opencode": ["run", "--format", "json"],
}
# OpenCode has no flag for read-only: its `plan` agent refuses edits, and
# the documented OPENCODE_CONFIG_CONTENT (config applied over the user's and
# the project's files) denies edits, shell and subagents as well.
OPENCODE_READ_ONLY = '{"permission":{"edit":"deny","bash":"deny","task":"deny"}}'
ACCESS = {
    "claude": {"read_only": (["--permission-mode", "plan"], {}),
               "edit": (["--permission-mode", "acceptEdits"], {}),
               # Claude Code refuses bypassPermissions to root unless told it
               # runs in a sandbox (IS_SANDBOX=1); the recorder runs as root
               # in its namespace. write_file.full_as_root records the refusal.
               "full": (["--permission-mode", "bypassPermissions"], {"IS_SANDBOX": "1"}),
               "full_as_root": (["--permission-mode", "bypassPermissions"], {})},
    "codex": {"read_only": (["--sandbox", "read-only"], {}),
              "edit": (["--sandbox", "workspace-write"], {}),
              "full": (["--sandbox", "danger-full-access"], {})},
    "gemini": {"read_only": (["--approval-mode", "plan"], {}),
               "edit": (["--approval-mode", "auto_edit"], {}),
               "full": (["--approval-mode", "yolo"], {})},
    "opencode": {"read_only": (["--agent", "plan"], {"OPENCODE_CONFIG_CONTENT": OPENCODE_READ_ONLY}),
                 "edit": ([], {}),
                 "full": (["--auto"], {})},
}
WRITE_PROMPT = "Create the file recourse-note.txt in the working directory."
TASK_PROMPT = "Print the marker, then finish."
CONTINUE_MESSAGE = ("Continue the task where you stopped. Check the current state first and "
                    "do not repeat an action that already took effect.")
SESSION_PLACEHOLDER = "00000000-0000-4000-8000-000000000001"


def session_placeholder(session):
    """The placeholder for a session id, in the id's own form: a UUID, or
    OpenCode's `ses_` and 26 characters."""
    return "ses_" + "0" * 25 + "1" if session.startswith("ses_") else SESSION_PLACEHOLDER

# A session id the CLI never made, in each CLI's own form.
UNKNOWN_SESSION = {"claude": "00000000-0000-4000-8000-000000000002",
                   "codex": "00000000-0000-4000-8000-000000000002",
                   "gemini": "00000000-0000-4000-8000-000000000002",
                   "opencode": "ses_00000000000000000000000002"}


def session_argv(cli, session):
    """What resumes `session`, placed after the access flags."""
    if session is None:
        return []
    return {"claude": ["--resume", session], "codex": ["resume", session],
            "gemini": ["--resume", session], "opencode": ["--session", session]}[cli]


def next_argv(cli, level, message, session=None):
    access, env = ACCESS[cli][level]
    tail = ["-p", message] if cli in ("claude", "gemini") else [message]
    return OUTPUT_FLAGS[cli] + access + session_argv(cli, session) + tail, env


def printed_session(cli, stdout):
    """The session id the CLI printed first: Claude Code `session_id`
    (system/init), Codex `thread_id` (thread.started), Gemini CLI
    `session_id` (init), OpenCode `sessionID` (every event)."""
    key = {"claude": "session_id", "codex": "thread_id", "gemini": "session_id",
           "opencode": "sessionID"}[cli]
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get(key):
            return event[key]
    return None


SECRETS = ["sk-ant-api03-mockkey-000000000000", "sk-ant-oat01-mockkey-000000000000", "sk-mock-000000000000",
           "mock-gemini-key-000000000000"]


def scrub(text, work, port, session=None):
    text = text.replace(str(work), "$WORK")
    text = text.replace(str(ROOT / "agents" / "node_modules"), "$AGENTS")
    # agents/node_modules may be a link to another checkout's install.
    text = text.replace(str((ROOT / "agents" / "node_modules").resolve()), "$AGENTS")
    text = text.replace(str(ROOT), "$REPO")
    text = text.replace(f"127.0.0.1:{port}", "127.0.0.1:$PORT")
    text = text.replace(f"localhost:{port}", "localhost:$PORT")
    for s in SECRETS:
        text = text.replace(s, "$FAKE_KEY")
    # The session id a resume needs keeps one placeholder of its own; other
    # session and request ids vary per run and carry nothing the adapters read.
    if session:
        text = text.replace(session, session_placeholder(session))
    text = re.sub(r"(?!00000000-0000-4000-8000-00000000000\d)"
                  r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
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


def run(cli, scenario, argv, work, env):
    """One run of the real CLI in the sandbox, in `work` (kept between the
    runs of a resume pair: same HOME, same working directory)."""
    (work / "mock.log").unlink(missing_ok=True)
    cmd = ["bash", str(SANDBOX), scenario, str(work), "--",
           "timeout", "-k", "5", str(LIMIT_S), str(BIN / cli)] + argv
    started = time.time()
    p = subprocess.run(cmd, capture_output=True, stdin=subprocess.DEVNULL,
                       env=dict(os.environ, **env))
    port_file = work / "mock.port"
    started_file = work / "mock.port.started"
    repo = work / "repo"
    status = subprocess.run(["git", "-C", str(repo), "status", "--porcelain"],
                            capture_output=True, text=True).stdout if repo.exists() else ""
    return {"p": p, "elapsed": time.time() - started,
            "port": port_file.read_text().strip() if port_file.exists() else "47019",
            "log": (work / "mock.log").read_text() if (work / "mock.log").exists() else "",
            "mock_started": float(started_file.read_text()) if started_file.exists() else None,
            "worktree": status.splitlines()}


def save(dest, cli, scenario, argv, env, r, work, session=None, **extra):
    """Writes one recording: stdout, stderr, the mock's request log and
    meta.json, all scrubbed."""
    def clean(text):
        return resets(scrub(text, work, r["port"], session), r["mock_started"])

    hung = r["p"].returncode in (124, 137)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    (dest / "stdout").write_text(clean(r["p"].stdout.decode("utf-8", "replace")))
    (dest / "stderr").write_text(clean(r["p"].stderr.decode("utf-8", "replace")))
    (dest / "requests.jsonl").write_text(clean(r["log"]))
    meta = {
        "cli": cli,
        "package": PACKAGE[cli],
        "version": version(cli),
        "scenario": scenario,
        "argv": [clean(a) for a in argv],
        "env": env,
        "exit_code": None if hung else r["p"].returncode,
        "hung": hung,
        "elapsed_s": round(r["elapsed"], 1),
        "worktree_after": [clean(line) for line in r["worktree"]],
        **extra,
        "recorded_at": datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
        "source": "tests/live/record.py: the real CLI against tests/live/mock_provider.py "
                  "in tests/live/sandbox.sh",
    }
    (dest / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    print(f"{cli:8} {dest.name:28} exit={meta['exit_code']} hung={hung} {r['elapsed']:.1f}s",
          flush=True)


def record(cli, scenario):
    """A provider scenario with the legacy command line (no access level)."""
    with tempfile.TemporaryDirectory(prefix=f"rec-{cli}-{scenario}-") as tmp:
        work = Path(tmp)
        r = run(cli, scenario, ARGV[cli], work, {})
        save(OUT / f"{cli}-{version(cli)}" / scenario, cli, scenario, ARGV[cli], {}, r, work)


def next_names(cli):
    """The recordings `--next` makes for one CLI."""
    return ([f"write_file.{lvl}" for lvl in ACCESS[cli]]
            + [f"write_file_shell.{lvl}" for lvl in ("read_only", "edit")]
            + ["resume"])


def record_next(cli, name):
    """`write_file.LEVEL` / `write_file_shell.LEVEL`, or `resume`: the pair
    resume.first and resume.continue, then resume.unknown in the same HOME."""
    dest = OUT_NEXT / f"{cli}-{version(cli)}"
    with tempfile.TemporaryDirectory(prefix=f"rec-{cli}-{name}-") as tmp:
        work = Path(tmp)
        if name != "resume":
            scenario, level = name.split(".")
            argv, env = next_argv(cli, level, WRITE_PROMPT)
            r = run(cli, scenario, argv, work, env)
            session = printed_session(cli, r["p"].stdout.decode("utf-8", "replace"))
            save(dest / name, cli, scenario, argv, env, r, work, session,
                 access=level.removesuffix("_as_root"))
            return
        argv, env = next_argv(cli, "edit", TASK_PROMPT)
        first = run(cli, "tool_then_error", argv, work, env)
        session = printed_session(cli, first["p"].stdout.decode("utf-8", "replace"))
        save(dest / "resume.first", cli, "tool_then_error", argv, env, first, work, session,
             access="edit")
        if session is None:
            print(f"{cli:8} resume.first printed no session id: no resume recorded", flush=True)
            return
        argv, env = next_argv(cli, "edit", CONTINUE_MESSAGE, session)
        cont = run(cli, "tool_then_error", argv, work, env)
        save(dest / "resume.continue", cli, "tool_then_error", argv, env, cont, work, session,
             access="edit", resumes={"recording": "resume.first",
                                     "session_id": scrub(session, work, first["port"], session)})
        argv, env = next_argv(cli, "edit", CONTINUE_MESSAGE, UNKNOWN_SESSION[cli])
        unknown = run(cli, "ok", argv, work, env)
        save(dest / "resume.unknown", cli, "ok", argv, env, unknown, work, session,
             access="edit", resumes={"recording": None, "session_id": UNKNOWN_SESSION[cli]})


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("clis", nargs="*", default=list(ARGV))
    ap.add_argument("--scenario", action="append", dest="scenarios")
    ap.add_argument("--next", action="store_true",
                    help="record the access levels and session resume into recorded-next/")
    ap.add_argument("--only", action="append", metavar="NAME",
                    help="with --next: only these (write_file.edit, resume, ...)")
    args = ap.parse_args()
    for cli in args.clis:
        if cli not in ARGV:
            sys.exit(f"unknown CLI {cli!r}; one of {', '.join(ARGV)}")
        if not (BIN / cli).exists():
            sys.exit(f"{BIN / cli} is missing: run scripts/setup.sh first")
    scenarios = args.scenarios or SCENARIOS

    def one_cli(cli):
        if args.next:
            for name in next_names(cli):
                if not args.only or name in args.only:
                    record_next(cli, name)
            return
        for s in scenarios:
            record(cli, s)

    with ThreadPoolExecutor(max_workers=len(args.clis)) as pool:
        list(pool.map(one_cli, args.clis))


if __name__ == "__main__":
    main()
