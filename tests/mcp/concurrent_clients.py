"""Two clients of one served engine at once, each in its own MCP session (the official
Python client over streamable HTTP): the first sends `hostile.count` calls together; the
second calls `probe` again and again, one call at a time, until every hostile call has
answered; then, if the plan has one, the `after` call once. Times are seconds since the
hostile calls were started.

Plan:   {"url": ..., "hostile": {"name", "arguments", "count"}, "probe": {"name", "arguments"},
         "after": {"name", "arguments"} (optional), "limit_s": n}
        (everything stops after limit_s, answered or not)
Report: {"hostile": [{"result", "ended_s"}, ...],
         "probes": [{"result", "started_s", "ended_s"}, ...],
         "after": {"result", "started_s", "ended_s"} (when the plan has one)}
"""

import json
import sys
import time

import anyio
from mcp.client.client import Client
from mcp.shared.exceptions import MCPError


async def call(client, name, arguments):
    try:
        result = await client.call_tool(name, arguments)
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)
    except MCPError as e:
        return {"error": {"code": e.code, "message": e.message}}


async def main():
    plan = json.load(sys.stdin)
    hostile, probe = plan["hostile"], plan["probe"]
    report = {"hostile": [], "probes": []}
    async with Client(plan["url"], read_timeout_seconds=plan["limit_s"]) as attacker, Client(
        plan["url"], read_timeout_seconds=plan["limit_s"]
    ) as prober:
        start = time.monotonic()
        answered = anyio.Event()

        async def attack():
            result = await call(attacker, hostile["name"], hostile["arguments"])
            report["hostile"].append({"result": result, "ended_s": time.monotonic() - start})
            if len(report["hostile"]) == hostile["count"]:
                answered.set()

        with anyio.move_on_after(plan["limit_s"]):
            async with anyio.create_task_group() as group:
                for _ in range(hostile["count"]):
                    group.start_soon(attack)
                while not answered.is_set():
                    started = time.monotonic() - start
                    result = await call(prober, probe["name"], probe["arguments"])
                    ended = time.monotonic() - start
                    report["probes"].append(
                        {"result": result, "started_s": started, "ended_s": ended}
                    )
            if "after" in plan:
                after = plan["after"]
                started = time.monotonic() - start
                result = await call(prober, after["name"], after["arguments"])
                ended = time.monotonic() - start
                report["after"] = {"result": result, "started_s": started, "ended_s": ended}
    json.dump(report, sys.stdout)


anyio.run(main)
