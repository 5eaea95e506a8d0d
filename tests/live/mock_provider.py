#!/usr/bin/env python3
"""A loopback mock of the providers the real agent CLIs talk to.

It speaks enough of the Anthropic Messages API (`POST /v1/messages`, streamed
or not), the OpenAI Responses API (`POST /v1/responses`, streamed) and Chat
Completions (`POST /v1/chat/completions`), and Gemini's
`generateContent` / `streamGenerateContent` to give each CLI a normal answer,
a tool call, or one documented failure, chosen by `--scenario`.

Error bodies and headers follow the providers' public API references:
  Anthropic  https://docs.anthropic.com/en/api/errors and /en/api/rate-limits
  OpenAI     https://platform.openai.com/docs/guides/error-codes
             (Codex's plan limit: `usage_limit_reached` with `resets_in_seconds`,
             codex-rs/core/src/client.rs)
  Gemini     https://ai.google.dev/gemini-api/docs/troubleshooting and
             google.rpc QuotaFailure / RetryInfo details

Scenarios that act rather than fail:
  tool_then_error   the model runs a harmless shell command, then the
                    provider fails (500) on every later request, until a
                    request brings a new user message after the tool's
                    result: a resumed session, answered with success;
  write_file        the model writes recourse-note.txt in the CLI's working
                    directory (`--workdir`) with the CLI's own file tool,
                    then answers once the tool's result (done or refused)
                    comes back;
  write_file_shell  the same through the CLI's shell tool;
  write_then_error  `tool_then_error` with `write_file`'s call: the model
                    writes the file, then the provider fails until a resumed
                    session brings a new user message (at `read_only` the
                    CLI refuses the write first).

Every request is appended to `--log` as one JSON line: path, status sent,
the tools declared, and what the conversation held (`user_texts`,
`earlier_turns`: whether assistant turns came before the last user message,
`tool_results`, `last_tool_result`, `last_user`), so a recording shows what
the CLI asked for and a test can tell a resumed session (earlier turns plus
the continuation message) from a fresh prompt. Standard library only; it binds
127.0.0.1 and is meant to run inside the test's own network namespace.
"""

import argparse
import json
import os
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# Reset instants are offsets from the mock's start (written to
# `--port-file`.started), so the recorder can turn them into placeholders and
# a replay months later sees a future reset at the same distance.
# A usage window about to reset: within a 15 min wait. MOCK_RESET_SOON_S
# shortens it for a test that waits for the reset (usage_limit_until_reset).
RESET_SOON_S = int(os.environ.get("MOCK_RESET_SOON_S", "600"))
# CLIs print reset clock times to the minute; ten minutes keeps the rounded
# time in the future.
RESET_FAR_S = 4 * 3600 + 19 * 60  # a daily quota: beyond a short-throttle bound


STARTED = time.time()


def rfc3339(seconds_from_start):
    t = datetime.fromtimestamp(STARTED, timezone.utc) + timedelta(seconds=seconds_from_start)
    return t.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def epoch(seconds_from_start):
    return int(STARTED + seconds_from_start)


# --- failures, per API family -------------------------------------------------
# Each returns (status, headers, body-dict) or None when the scenario is not an
# HTTP error for that family (the success/tool/cut paths handle those).


def anthropic_error(scenario):
    def err(status, etype, message, headers=None):
        body = {"type": "error", "error": {"type": etype, "message": message},
                "request_id": "req_mock0001"}
        return status, headers or {}, body

    if scenario == "rate_limited":
        return err(429, "rate_limit_error",
                   "This request would exceed the rate limit for your organization of "
                   "50 requests per minute. For details, refer to: "
                   "https://docs.claude.com/en/api/rate-limits.",
                   {"retry-after": "12",
                    "anthropic-ratelimit-requests-limit": "50",
                    "anthropic-ratelimit-requests-remaining": "0",
                    "anthropic-ratelimit-requests-reset": rfc3339(12)})
    if scenario == "usage_limit":
        # A subscription's 5-hour window, as the unified rate-limit headers say it.
        return err(429, "rate_limit_error", "Rate limited. Please try again later.",
                   {"anthropic-ratelimit-unified-status": "rejected",
                    "anthropic-ratelimit-unified-reset": str(epoch(RESET_SOON_S)),
                    "anthropic-ratelimit-unified-representative-claim": "five_hour",
                    "anthropic-ratelimit-unified-5h-status": "rejected",
                    "anthropic-ratelimit-unified-5h-reset": str(epoch(RESET_SOON_S))})
    if scenario == "quota_day":
        return err(429, "rate_limit_error",
                   "This request would exceed your organization's rate limit of "
                   "1,000,000 input tokens per day.",
                   {"retry-after": str(RESET_FAR_S),
                    "anthropic-ratelimit-input-tokens-reset": rfc3339(RESET_FAR_S)})
    if scenario == "overloaded":
        return err(529, "overloaded_error", "Overloaded")
    if scenario == "server_error":
        return err(500, "api_error", "Internal server error")
    if scenario == "unavailable":
        return err(503, "api_error", "Service Unavailable")
    if scenario == "unauthorized":
        return err(401, "authentication_error", "invalid x-api-key")
    if scenario == "secret_echo":
        # A gateway that echoes what it was sent: planted, synthetic secrets
        # for the redaction audit (tests/engine_redaction.rs).
        return err(400, "invalid_request_error",
                   "upstream gateway rejected the request from sk-ant-api03-PLANTEDSECRETaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa "
                   "Authorization: Bearer PLANTEDBEARERzzzzzzzzzzzzzzzzzzzz "
                   "account planted.person@example.com")
    if scenario == "forbidden":
        return err(403, "permission_error",
                   "Your API key does not have permission to use the specified resource.")
    if scenario == "credit_balance":
        return err(400, "invalid_request_error",
                   "Your credit balance is too low to access the Anthropic API. "
                   "Please go to Plans & Billing to upgrade or purchase credits.")
    if scenario == "model_not_found":
        return err(404, "not_found_error", "model: claude-nonexistent-9")
    return None


def openai_error(scenario):
    def err(status, etype, code, message, headers=None, extra=None):
        e = {"message": message, "type": etype, "param": None, "code": code}
        e.update(extra or {})
        return status, headers or {}, {"error": e}

    if scenario == "rate_limited":
        return err(429, "requests", "rate_limit_exceeded",
                   "Rate limit reached for gpt-5 in organization org-mock on requests per "
                   "min (RPM): Limit 500, Used 500, Requested 1. Please try again in 12s.",
                   {"retry-after": "12", "x-ratelimit-reset-requests": "12s",
                    "x-ratelimit-remaining-requests": "0"})
    if scenario == "usage_limit":
        return err(429, "usage_limit_reached", None, "The usage limit has been reached",
                   None, {"plan_type": "plus", "resets_in_seconds": RESET_SOON_S,
                          "resets_at": epoch(RESET_SOON_S)})
    if scenario == "quota_day":
        return err(429, "insufficient_quota", "insufficient_quota",
                   "You exceeded your current quota, please check your plan and billing "
                   "details.")
    if scenario in ("overloaded", "unavailable"):
        return err(503, "server_error", None,
                   "The server is overloaded or not ready yet.")
    if scenario == "server_error":
        return err(500, "server_error", None,
                   "The server had an error while processing your request. Sorry about that!")
    if scenario == "unauthorized":
        return err(401, "invalid_request_error", "invalid_api_key",
                   "Incorrect API key provided: sk-mock***********1234. You can find your "
                   "API key at https://platform.openai.com/account/api-keys.")
    if scenario == "forbidden":
        return err(403, "invalid_request_error", "unsupported_country_region_territory",
                   "Country, region, or territory not supported")
    if scenario == "credit_balance":
        return err(429, "insufficient_quota", "insufficient_quota",
                   "You exceeded your current quota, please check your plan and billing "
                   "details.")
    if scenario == "model_not_found":
        return err(404, "invalid_request_error", "model_not_found",
                   "The model `gpt-nonexistent` does not exist or you do not have access to it.")
    return None


def gemini_error(scenario):
    def err(status, gstatus, message, details=None, headers=None):
        e = {"code": status, "message": message, "status": gstatus}
        if details:
            e["details"] = details
        return status, headers or {}, {"error": e}

    def quota(quota_id, delay):
        return [{"@type": "type.googleapis.com/google.rpc.QuotaFailure",
                 "violations": [{"quotaMetric":
                                 "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                                 "quotaId": quota_id,
                                 "quotaDimensions": {"location": "global",
                                                     "model": "gemini-2.5-pro"},
                                 "quotaValue": "2"}]},
                {"@type": "type.googleapis.com/google.rpc.Help",
                 "links": [{"description": "Learn more about Gemini API quotas",
                            "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]},
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}]

    if scenario == "rate_limited":
        return err(429, "RESOURCE_EXHAUSTED",
                   "You exceeded your current quota, please check your plan and billing "
                   "details. For more information on this error, head to: "
                   "https://ai.google.dev/gemini-api/docs/rate-limits.",
                   quota("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "12s"))
    if scenario in ("quota_day", "usage_limit"):
        return err(429, "RESOURCE_EXHAUSTED",
                   "You exceeded your current quota, please check your plan and billing "
                   "details. For more information on this error, head to: "
                   "https://ai.google.dev/gemini-api/docs/rate-limits.",
                   quota("GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                         f"{RESET_FAR_S}s"))
    if scenario in ("overloaded", "unavailable"):
        return err(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")
    if scenario == "server_error":
        return err(500, "INTERNAL",
                   "An internal error has occurred. Please retry or report in "
                   "https://developers.generativeai.google/guide/troubleshooting")
    if scenario == "unauthorized":
        return err(400, "INVALID_ARGUMENT",
                   "API key not valid. Please pass a valid API key.",
                   [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                     "reason": "API_KEY_INVALID", "domain": "googleapis.com"}])
    if scenario == "forbidden":
        return err(403, "PERMISSION_DENIED",
                   "Method doesn't allow unregistered callers (callers without established "
                   "identity). Please use API Key or other form of API consumer identity to "
                   "call this API.")
    if scenario == "credit_balance":
        return err(400, "FAILED_PRECONDITION",
                   "User location is not supported for the API use.")
    if scenario == "model_not_found":
        return err(404, "NOT_FOUND",
                   "models/gemini-nonexistent is not found for API version v1beta, or is not "
                   "supported for generateContent. Call ListModels to see the list of "
                   "available models and their supported methods.")
    return None


# --- success and tool-call streams -------------------------------------------

ANSWER = "Done."


def sse(event, data):
    head = f"event: {event}\n" if event else ""
    return (head + "data: " + json.dumps(data) + "\n\n").encode()


def has_tool_result(family, req):
    """The CLI is sending back a tool's output: the tool ran."""
    return any(kind == "tool_result" for kind, _ in conversation(family, req))


def tool_names(family, req):
    names = []
    if family == "anthropic":
        names = [t.get("name", "") for t in req.get("tools", [])]
    elif family == "openai":
        names = [t.get("name") or t.get("function", {}).get("name", "")
                 for t in req.get("tools", [])]
    else:
        for t in req.get("tools", []):
            names += [d.get("name", "") for d in t.get("functionDeclarations", [])]
    return names


def conversation(family, req):
    """The request's conversation in order, as (kind, text) pairs: kind is
    user_text, assistant_text, tool_call or tool_result."""
    items = []
    if family == "anthropic":
        for m in req.get("messages", []):
            role, content = m.get("role"), m.get("content")
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            for b in content or []:
                kind = b.get("type")
                if kind == "text":
                    items.append((role + "_text", b.get("text", "")))
                elif kind == "tool_use":
                    items.append(("tool_call", b.get("name", "")))
                elif kind == "tool_result":
                    items.append(("tool_result", json.dumps(b.get("content", ""))))
    elif family == "openai" and "input" in req:
        entries = req["input"]
        if isinstance(entries, str):
            entries = [{"type": "message", "role": "user", "content": entries}]
        for e in entries:
            kind = e.get("type", "message")
            if kind == "message" and e.get("role") in ("user", "assistant"):
                content = e.get("content")
                if isinstance(content, str):
                    content = [{"text": content}]
                for c in content or []:
                    if "text" in c:
                        items.append((e["role"] + "_text", c["text"]))
            elif kind.endswith("_call"):
                items.append(("tool_call", e.get("name", kind)))
            elif kind.endswith("_call_output"):
                items.append(("tool_result", json.dumps(e.get("output", ""))))
    elif family == "openai":  # Chat Completions
        for m in req.get("messages", []):
            role, content = m.get("role"), m.get("content")
            if role == "tool":
                items.append(("tool_result", json.dumps(content)))
                continue
            if isinstance(content, str):
                content = [{"text": content}]
            if role in ("user", "assistant"):
                items += [(role + "_text", c["text"]) for c in content or [] if "text" in c]
            items += [("tool_call", c.get("function", {}).get("name", ""))
                      for c in m.get("tool_calls") or []]
    else:
        for c in req.get("contents", []):
            role = "assistant" if c.get("role") == "model" else "user"
            for part in c.get("parts", []):
                if "text" in part:
                    items.append((role + "_text", part["text"]))
                elif "functionCall" in part:
                    items.append(("tool_call", part["functionCall"].get("name", "")))
                elif "functionResponse" in part:
                    response = part["functionResponse"].get("response")
                    items.append(("tool_result", json.dumps(response)))
    return items


def spoken(text):
    """A user text a person (or Recourse) wrote, not one of the CLI's own
    framing blocks (<system-reminder>, <environment_context>, …) nor Claude
    Code's "(no content)" placeholder."""
    return not text.lstrip().startswith("<") and text.strip() != "(no content)"


def last_user_index(items):
    return max((i for i, (k, t) in enumerate(items) if k == "user_text" and spoken(t)),
               default=-1)


def history(family, req):
    """What the mock logs about the conversation it was sent."""
    items = conversation(family, req)
    users = [t for k, t in items if k == "user_text" and spoken(t)]
    results = [t for k, t in items if k == "tool_result"]
    last_user = last_user_index(items)
    return {"user_texts": [t[:200] for t in users],
            "earlier_turns": any(k in ("assistant_text", "tool_call")
                                 for k, _ in items[:max(last_user, 0)]),
            "tool_results": len(results),
            "last_tool_result": results[-1][:300] if results else None,
            "last_user": users[-1][:200] if users else None}


def continues_after_tool(family, req):
    """A resumed session: a new user message came after the tool results, so
    the CLI is not retrying the failed request but continuing the task."""
    items = conversation(family, req)
    last_result = max((i for i, (k, _) in enumerate(items) if k == "tool_result"), default=-1)
    return 0 <= last_result < last_user_index(items)


def acted_since_user(family, req):
    """The model already acted on the last user message (a tool call, its
    result, or text): time to finish. A fresh prompt or a resumed session's
    continuation message ends the conversation, and the model starts over.
    (Claude Code replaces a refused tool call in a resumed session by
    "[Tool use interrupted]" text, with no tool result: calling the tool
    again on that would loop for ever.)"""
    items = conversation(family, req)
    return any(k in ("assistant_text", "tool_call", "tool_result")
               for k, _ in items[last_user_index(items) + 1:])


def pick_tool(family, req):
    """A harmless shell command through whatever shell tool the CLI declares."""
    names = tool_names(family, req)
    for candidate in ("Bash", "bash", "shell", "exec_command", "run_shell_command",
                      "local_shell", "list_directory"):
        if candidate in names:
            return candidate
    return names[0] if names else "Bash"


def shell_call(family, req):
    """The tool call of `tool_then_error`: (name, arguments, custom)."""
    name = pick_tool(family, req)
    return name, tool_args(name), False


# What `write_file` asks the CLI to write, relative to its working directory.
NOTE_FILE = "recourse-note.txt"
NOTE_TEXT = "written by the agent\n"
NOTE_PATCH = f"*** Begin Patch\n*** Add File: {NOTE_FILE}\n+{NOTE_TEXT}*** End Patch\n"


def write_call(family, req, workdir, shell_only=False):
    """The tool call of `write_file`: (name, arguments, custom). Through the
    tool each CLI declares for writing files (Claude Code `Write`, OpenCode
    `write`, Gemini CLI `write_file`, Codex `apply_patch` where its model
    metadata offers it), else through its shell (Codex 0.171 with an unknown
    model offers only `exec_command`); `shell_only` skips the file tools. A
    CLI that declares no such tool (a read-only mode may withhold them) is
    asked for one anyway, as a model that read the task would, so the
    recording shows how the CLI answers that."""
    path = f"{workdir}/{NOTE_FILE}"
    tools = req.get("tools", [])
    declared = tool_names(family, req)
    if shell_only:
        declared = [n for n in declared if n in SHELL_TOOLS]
    if "Write" in declared:
        return "Write", {"file_path": path, "content": NOTE_TEXT}, False
    if "write" in declared:
        return "write", {"filePath": path, "content": NOTE_TEXT}, False
    if "write_file" in declared:
        return "write_file", {"file_path": path, "content": NOTE_TEXT}, False
    if "apply_patch" in declared:
        custom = any(t.get("name") == "apply_patch" and t.get("type") == "custom" for t in tools)
        return "apply_patch", (NOTE_PATCH if custom else {"input": NOTE_PATCH}), custom
    shell = f"printf '{NOTE_TEXT}' > {NOTE_FILE}"
    if "exec_command" in declared:
        return "exec_command", {"cmd": shell}, False
    if "shell" in declared:
        return "shell", {"command": ["bash", "-lc", shell]}, False
    for name in ("Bash", "bash", "run_shell_command"):
        if name in declared:
            return name, {"command": shell, "description": "Write the note"}, False
    # Nothing declared: ask anyway, as a model that read the task would, in
    # the CLI's own naming (OpenCode names its tools in lower case).
    lower = all(n[:1].islower() for n in tool_names(family, req))
    if shell_only:
        name = {"gemini": "run_shell_command", "openai": "exec_command"}.get(
            family, "bash" if lower else "Bash")
        args = {"cmd": shell} if name == "exec_command" else \
            {"command": shell, "description": "Write the note"}
        return name, args, False
    if family == "anthropic":
        if lower:
            return "write", {"filePath": path, "content": NOTE_TEXT}, False
        return "Write", {"file_path": path, "content": NOTE_TEXT}, False
    return "write_file", {"file_path": path, "content": NOTE_TEXT}, False


SHELL_TOOLS = ("exec_command", "shell", "Bash", "bash", "run_shell_command")


def tool_args(name):
    if name == "list_directory":
        return {"dir_path": "."}
    if name in ("shell",):
        return {"command": ["echo", "recourse-tool-ran"]}
    if name == "exec_command":
        return {"cmd": "echo recourse-tool-ran"}
    return {"command": "echo recourse-tool-ran", "description": "Print a marker"}


def anthropic_stream(wfile, req, call, cut):
    model = req.get("model", "claude-sonnet-4-5")
    wfile.write(sse("message_start", {"type": "message_start", "message": {
        "id": "msg_mock01", "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 1}}}))
    wfile.flush()
    if cut:
        wfile.write(sse("content_block_start", {"type": "content_block_start", "index": 0,
                                                "content_block": {"type": "text", "text": ""}}))
        wfile.write(sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                "delta": {"type": "text_delta",
                                                          "text": "I will start by"}}))
        wfile.flush()
        return
    if call:
        name, args, _ = call
        wfile.write(sse("content_block_start", {"type": "content_block_start", "index": 0,
                                                "content_block": {"type": "tool_use",
                                                                  "id": "toolu_mock01",
                                                                  "name": name, "input": {}}}))
        wfile.write(sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                "delta": {"type": "input_json_delta",
                                                          "partial_json": json.dumps(args)}}))
        stop = "tool_use"
    else:
        wfile.write(sse("content_block_start", {"type": "content_block_start", "index": 0,
                                                "content_block": {"type": "text", "text": ""}}))
        wfile.write(sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                "delta": {"type": "text_delta", "text": ANSWER}}))
        stop = "end_turn"
    wfile.write(sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
    wfile.write(sse("message_delta", {"type": "message_delta",
                                      "delta": {"stop_reason": stop, "stop_sequence": None},
                                      "usage": {"output_tokens": 5}}))
    wfile.write(sse("message_stop", {"type": "message_stop"}))


def anthropic_message(req):
    return {"id": "msg_mock01", "type": "message", "role": "assistant",
            "model": req.get("model", "claude-sonnet-4-5"),
            "content": [{"type": "text", "text": ANSWER}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 12, "output_tokens": 2}}


def responses_stream(wfile, req, call, cut):
    model = req.get("model", "gpt-5")
    base = {"id": "resp_mock01", "object": "response", "created_at": int(time.time()),
            "model": model, "status": "in_progress", "output": []}
    wfile.write(sse("response.created", {"type": "response.created", "response": base}))
    wfile.flush()
    if cut:
        wfile.write(sse("response.output_item.added", {
            "type": "response.output_item.added", "output_index": 0,
            "item": {"id": "msg_mock01", "type": "message", "role": "assistant",
                     "status": "in_progress", "content": []}}))
        wfile.write(sse("response.output_text.delta", {
            "type": "response.output_text.delta", "item_id": "msg_mock01",
            "output_index": 0, "content_index": 0, "delta": "I will start by"}))
        wfile.flush()
        return
    if call and call[2]:  # a freeform (custom) tool such as Codex's apply_patch
        item = {"id": "ctc_mock01", "type": "custom_tool_call", "status": "completed",
                "call_id": "call_mock01", "name": call[0], "input": call[1]}
    elif call:
        item = {"id": "fc_mock01", "type": "function_call", "status": "completed",
                "call_id": "call_mock01", "name": call[0], "arguments": json.dumps(call[1])}
    else:
        item = {"id": "msg_mock01", "type": "message", "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": ANSWER, "annotations": []}]}
        wfile.write(sse("response.output_item.added", {
            "type": "response.output_item.added", "output_index": 0,
            "item": dict(item, status="in_progress", content=[])}))
        wfile.write(sse("response.output_text.delta", {
            "type": "response.output_text.delta", "item_id": "msg_mock01",
            "output_index": 0, "content_index": 0, "delta": ANSWER}))
    wfile.write(sse("response.output_item.done", {"type": "response.output_item.done",
                                                  "output_index": 0, "item": item}))
    done = dict(base, status="completed", output=[item],
                usage={"input_tokens": 12, "input_tokens_details": {"cached_tokens": 0},
                       "output_tokens": 2, "output_tokens_details": {"reasoning_tokens": 0},
                       "total_tokens": 14})
    wfile.write(sse("response.completed", {"type": "response.completed", "response": done}))


def chat_stream(wfile, req, call, cut):
    model = req.get("model", "gpt-5")

    def chunk(delta, finish=None):
        return sse(None, {"id": "chatcmpl-mock", "object": "chat.completion.chunk",
                          "created": int(time.time()), "model": model,
                          "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    wfile.write(chunk({"role": "assistant", "content": ""}))
    wfile.flush()
    if cut:
        wfile.write(chunk({"content": "I will start by"}))
        wfile.flush()
        return
    if call:
        wfile.write(chunk({"tool_calls": [{"index": 0, "id": "call_mock01", "type": "function",
                                           "function": {"name": call[0],
                                                        "arguments": json.dumps(call[1])}}]}))
        wfile.write(chunk({}, "tool_calls"))
    else:
        wfile.write(chunk({"content": ANSWER}))
        wfile.write(chunk({}, "stop"))
    wfile.write(b"data: [DONE]\n\n")


def gemini_chunk(parts, finish=None):
    cand = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish:
        cand["finishReason"] = finish
    return {"candidates": [cand],
            "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 2,
                              "totalTokenCount": 14},
            "modelVersion": "gemini-2.5-pro", "responseId": "mock01"}


def gemini_parts(call):
    if call:
        return [{"functionCall": {"name": call[0], "args": call[1]}}]
    return [{"text": ANSWER}]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mock-provider/1"

    def log_message(self, fmt, *args):  # quiet: requests go to the JSON log
        pass

    def record(self, status, family, note="", req=None):
        entry = {"method": self.command, "path": self.path, "family": family,
                 "status": status, "note": note}
        if req:
            family = "openai" if family == "chat" else family
            entry["tools"] = tool_names(family, req)
            entry.update(history(family, req))
        with self.server.log_lock, open(self.server.log_path, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def body(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return {}

    def send_json(self, status, body, headers=None):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def start_stream(self):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True

    def cut(self):
        """Headers and the first events went out; now the connection drops."""
        self.wfile.flush()
        time.sleep(0.2)
        self.close_connection = True
        self.connection.shutdown(2)

    def do_GET(self):
        path = self.path.split("?")[0]
        if path.endswith("/models") or "/models" in path:
            self.record(200, "models")
            self.send_json(200, {"object": "list", "data": [], "models": []})
            return
        self.record(404, "unknown")
        self.send_json(404, {"error": {"message": "not found"}})

    def do_HEAD(self):
        self.record(200, "head")
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        req = self.body()
        path = self.path.split("?")[0]
        if path.endswith("/messages/count_tokens"):
            self.record(200, "anthropic", "count_tokens")
            self.send_json(200, {"input_tokens": 12})
            return
        if path.endswith("/messages"):
            family = "anthropic"
        elif path.endswith("/responses"):
            family = "openai"
        elif path.endswith("/chat/completions"):
            family = "chat"
        elif ":generateContent" in path or ":streamGenerateContent" in path:
            family = "gemini"
        elif ":countTokens" in path:
            self.record(200, "gemini", "countTokens")
            self.send_json(200, {"totalTokens": 12})
            return
        else:
            self.record(404, "unknown")
            self.send_json(404, {"error": {"message": f"no route {path}"}})
            return
        self.answer(family, path, req)

    def answer(self, family, path, req):
        scenario = self.server.scenario
        api = "openai" if family == "chat" else family
        call = None
        if scenario == "usage_limit_until_reset":
            # The subscription window: refused until the reset it announces
            # (whole seconds), then served.
            scenario = "usage_limit" if time.time() < epoch(RESET_SOON_S) else "ok"
        if scenario in ("tool_then_error", "write_then_error"):
            if continues_after_tool(api, req):
                scenario += ": continued"  # answered: the session resumed
            elif has_tool_result(api, req):
                scenario = "server_error"
            elif scenario == "write_then_error":
                call = write_call(api, req, self.server.workdir)
            else:
                call = shell_call(api, req)
        elif scenario in ("write_file", "write_file_shell"):
            if not tool_names(api, req):
                scenario += ": no tools (a side request such as a title)"
            elif acted_since_user(api, req):
                scenario += ": answered"
            else:
                call = write_call(api, req, self.server.workdir,
                                  shell_only=scenario == "write_file_shell")
        errors = {"anthropic": anthropic_error, "openai": openai_error, "chat": openai_error,
                  "gemini": gemini_error}[family]
        failure = errors(scenario)
        if failure:
            status, headers, body = failure
            self.record(status, family, scenario, req)
            self.send_json(status, body, headers)
            return
        cut = scenario == "cut_stream"
        streamed = (family == "gemini" and ":streamGenerateContent" in path) or \
            (family != "gemini" and req.get("stream"))
        self.record(200, family, scenario + ("" if streamed else " (not streamed)"), req)
        if not streamed:
            if cut:
                self.start_stream()
                self.cut()
            elif family == "anthropic":
                self.send_json(200, anthropic_message(req))
            elif family == "gemini":
                self.send_json(200, gemini_chunk(gemini_parts(call), "STOP"))
            else:
                self.send_json(200, {"id": "chatcmpl-mock", "object": "chat.completion",
                                     "model": req.get("model"), "choices": [
                                         {"index": 0, "finish_reason": "stop",
                                          "message": {"role": "assistant", "content": ANSWER}}]})
            return
        self.start_stream()
        if family == "anthropic":
            anthropic_stream(self.wfile, req, call, cut)
        elif family == "openai":
            responses_stream(self.wfile, req, call, cut)
        elif family == "chat":
            chat_stream(self.wfile, req, call, cut)
        else:
            if cut:
                self.wfile.write(sse(None, gemini_chunk([{"text": "I will start by"}])))
            else:
                self.wfile.write(sse(None, gemini_chunk(gemini_parts(call), "STOP")))
        if cut:
            self.cut()
            return
        self.wfile.flush()


SCENARIOS = ["ok", "rate_limited", "usage_limit", "usage_limit_until_reset", "quota_day",
             "overloaded", "server_error", "unavailable", "unauthorized", "forbidden",
             "credit_balance", "model_not_found", "cut_stream", "tool_then_error", "write_then_error",
             "secret_echo",
             "write_file", "write_file_shell"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--scenario", choices=SCENARIOS, required=True)
    ap.add_argument("--log", default="/dev/null")
    ap.add_argument("--port-file", help="write the bound port here once listening")
    ap.add_argument("--workdir", default=".",
                    help="the CLI's working directory: where `write_file` writes")
    args = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    server.scenario = args.scenario
    server.log_path = args.log
    server.workdir = os.path.abspath(args.workdir)
    server.log_lock = threading.Lock()
    port = server.server_address[1]
    if args.port_file:
        with open(args.port_file + ".started", "w") as f:
            f.write(repr(STARTED))
        with open(args.port_file + ".tmp", "w") as f:
            f.write(str(port))
        os.replace(args.port_file + ".tmp", args.port_file)
    print(port, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
