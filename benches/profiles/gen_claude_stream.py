#!/usr/bin/env python3
"""A deterministic Claude Code stream-json stream for the profile bench
(benches/profiles.sh): one session of many turns (init, assistant tool
calls, user tool results, text, result with result_index), in the shapes
of tests/fixtures/profiles/claude-stream/ (SOURCES.md there names the
types they follow). stdlib only."""
import argparse
import json
import random

ap = argparse.ArgumentParser()
ap.add_argument("--bytes", required=True, help="about how much to write: 64M, 256M, 1G")
ap.add_argument("-o", "--out", required=True)
a = ap.parse_args()
units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
want = int(a.bytes[:-1]) * units[a.bytes[-1]] if a.bytes[-1] in units else int(a.bytes)

rng = random.Random(42)
sid = "5a486531-0201-43e0-bd81-d544bb08d0dc"
words = "the tests pass now and the build is green after the fix in parser module".split()


def uid(n):
    return "%08x-%04x-4%03x-8%03x-%012x" % (n, n % 65536, n % 4096, (n * 7) % 4096, n * 13)


def line(o):
    return json.dumps(o, separators=(",", ":")) + "\n"


written = 0
n = 0
turn = 0
with open(a.out, "w") as f:
    while written < want:
        out = [line({"type": "system", "subtype": "init", "apiKeySource": "none",
                     "claude_code_version": "2.1.337", "cwd": "/home/dev/project",
                     "tools": ["Bash", "Edit", "Read"], "mcp_servers": [],
                     "model": "claude-opus-4-7", "permissionMode": "default",
                     "uuid": uid(n), "session_id": sid})]
        for k in range(rng.randint(4, 12)):
            n += 1
            tool = "toolu_%024x" % n
            out.append(line({"type": "assistant", "message": {
                "id": "msg_%024x" % n, "content": [{"id": tool, "input": {
                    "command": "cargo test -p crate%d" % k, "description": "Run tests"},
                    "name": "Bash", "type": "tool_use"}],
                "model": "claude-opus-4-7", "role": "assistant", "stop_reason": None,
                "type": "message", "usage": {"input_tokens": 400 + k, "output_tokens": 38}},
                "parent_tool_use_id": None, "uuid": uid(n), "session_id": sid}))
            text = " ".join(rng.choice(words) for _ in range(rng.randint(8, 40)))
            out.append(line({"type": "user", "message": {"content": [{
                "tool_use_id": tool, "type": "tool_result", "content": text,
                "is_error": False}], "role": "user"},
                "parent_tool_use_id": None, "uuid": uid(n + 1), "session_id": sid}))
        out.append(line({"type": "result", "subtype": "success", "duration_ms": 8421,
                         "duration_api_ms": 7310, "is_error": False, "num_turns": 2,
                         "result": "All tests pass.", "stop_reason": "end_turn",
                         "total_cost_usd": 0.04, "terminal_reason": "completed",
                         "result_index": turn, "uuid": uid(n + 2), "session_id": sid}))
        turn += 1
        for l in out:
            f.write(l)
            written += len(l)
