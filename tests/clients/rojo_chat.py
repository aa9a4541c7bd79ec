"""A client of seed 002's chat wire, written to the seed and nothing else.

It posts one message to a turn route and reads the answer as rojo-chat-panel.ts does:
one JSON object per line, switched on `type`: `CHAT` appends to the reply, `TOOL_CALL`
opens a compact activity line (the tool's name and its arguments), `TOOL_RESULT`
appends ok or error to the open line of that tool, `DONE` ends the turn. It fails on
a type the seed does not define, a missing key, or a line after `DONE`; like the
TypeScript panel it reads past keys it does not know, and reports them, so that a test
can hold the wire to the seed's exact lines. Standard library only.

Usage: rojo_chat.py URL < {"message": ..., "conversation": ...}
Prints: {"reply": "...", "activity": [{"name", "args", "status"}], "lines": N,
         "unknown_keys": {"TYPE": ["key", ...]}, "done_error": DONE's `error` or null}
"""

import json
import sys
import urllib.request

KEYS = {
    "CHAT": {"type", "text"},
    "TOOL_CALL": {"type", "name", "args"},
    "TOOL_RESULT": {"type", "name", "result"},
    "DONE": {"type"},
}


def fail(why):
    print(why, file=sys.stderr)
    sys.exit(1)


def main():
    url = sys.argv[1]
    body = sys.stdin.read().encode()
    request = urllib.request.Request(
        url, data=body, headers={"Content-Type": "application/json"}, method="POST"
    )
    reply, activity, lines, done, unknown, done_error = [], [], 0, False, {}, None
    with urllib.request.urlopen(request, timeout=60) as answer:
        for raw in answer:
            if done:
                fail(f"a line after DONE: {raw!r}")
            line = json.loads(raw)
            lines += 1
            kind = line.get("type")
            if kind not in KEYS:
                fail(f"a type the seed does not define: {line}")
            if not KEYS[kind] <= set(line):
                fail(f"a {kind} line without the seed's keys: {line}")
            for key in sorted(set(line) - KEYS[kind]):
                unknown.setdefault(kind, []).append(key)
            if kind == "CHAT":
                reply.append(line["text"])
            elif kind == "TOOL_CALL":
                activity.append({"name": line["name"], "args": line["args"], "status": None})
            elif kind == "TOOL_RESULT":
                open_lines = [a for a in activity if a["name"] == line["name"] and a["status"] is None]
                if not open_lines:
                    fail(f"a result with no open call: {line}")
                result = json.loads(line["result"])
                failed = isinstance(result, dict) and "error" in result
                open_lines[0]["status"] = "error" if failed else "ok"
            else:
                done = True
                done_error = line.get("error")
    if not done:
        fail("the answer ended without DONE")
    print(json.dumps({"reply": "".join(reply), "activity": activity, "lines": lines, "unknown_keys": unknown, "done_error": done_error}))


if __name__ == "__main__":
    main()
