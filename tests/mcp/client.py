"""Drives an engine over MCP with the official Python client (PyPI `mcp`, pinned in
tests/oracle/requirements.txt), step by step as a plan on stdin says, and prints what it
saw as one JSON report on stdout. The Rust tests write the plans and check the reports.

Plan: {"server": {"stdio": [command, arg, ...]} | {"url": "http://.../mcp", "headers": {...}},
       "steps": [step, ...], "may_be_refused": false}
With "may_be_refused", a client the server turns away reports
{"refused": {"http_statuses": [...], "error": "..."}} (the HTTP statuses it got, in order)
instead of failing.
Steps, each answered by one entry of the report's "steps":
  {"list_tools": {"locale": "it-IT" | null}}     -> the tools/list result
  {"call": name, "arguments": {...}}              -> the tools/call result, or {"error": {code, message}}
  {"poll": name, "arguments": {...}, "until": {...}, "timeout_ms": n}
                                                  -> the first result whose structuredContent is "until"
  {"cancel": name, "arguments": {...}, "after_ms": n}
                                                  -> {"cancelled": true} once the client gave up on the call
  {"request": method}                             -> {"error": {code, message}} or {"result": ...}
  {"listen_tools_changed": {"write": path, "text": "...", "timeout_ms": n}}
                                                  -> {"changed": true, "tools": [names]}: listens
                                                     (subscriptions/listen), writes the file (or removes
                                                     it when "text" is null), and waits for
                                                     notifications/tools/list_changed
"""

import json
import os
import sys

import anyio
import httpx2
import mcp_types as types
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError


def dump(model):
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def error(e: MCPError):
    return {"error": {"code": e.code, "message": e.message}}


async def call(client, name, arguments):
    try:
        return dump(await client.call_tool(name, arguments))
    except MCPError as e:
        return error(e)


async def step(client, plan):
    if "list_tools" in plan:
        locale = plan["list_tools"].get("locale")
        meta = {"locale": locale} if locale else None
        return dump(await client.list_tools(meta=meta, cache_mode="bypass"))
    if "call" in plan:
        return await call(client, plan["call"], plan.get("arguments"))
    if "poll" in plan:
        result = None
        with anyio.move_on_after(plan.get("timeout_ms", 5000) / 1000):
            while True:
                result = await call(client, plan["poll"], plan.get("arguments"))
                if result.get("structuredContent") == plan["until"]:
                    break
                await anyio.sleep(0.05)
        return result
    if "cancel" in plan:
        async with anyio.create_task_group() as group:
            group.start_soon(call, client, plan["cancel"], plan.get("arguments"))
            await anyio.sleep(plan["after_ms"] / 1000)
            # Abandoning the request makes the client send notifications/cancelled.
            group.cancel_scope.cancel()
        return {"cancelled": True}
    if "listen_tools_changed" in plan:
        spec = plan["listen_tools_changed"]
        with anyio.fail_after(spec.get("timeout_ms", 10000) / 1000):
            async with client.listen(tools_list_changed=True) as subscription:
                if spec.get("text") is None:
                    os.remove(spec["write"])
                else:
                    with open(spec["write"], "w") as file:
                        file.write(spec["text"])
                async for _event in subscription:
                    tools = await client.list_tools(cache_mode="bypass")
                    return {"changed": True, "tools": [tool.name for tool in tools.tools]}
        raise AssertionError("the listen stream ended without a change")
    if "request" in plan:
        request = types.Request[types.RequestParams | None, str](method=plan["request"], params=None)
        try:
            return {"result": await client.session.send_request(request, dict)}
        except MCPError as e:
            return error(e)
    raise ValueError(f"unknown step {plan}")


def leaves(group):
    """The exceptions inside exception groups, innermost first."""
    if isinstance(group, BaseExceptionGroup):
        for inner in group.exceptions:
            yield from leaves(inner)
    else:
        yield group


async def main():
    plan = json.load(sys.stdin)
    server = plan["server"]
    statuses = []

    async def record(response):
        statuses.append(response.status_code)

    if "stdio" in server:
        command, *args = server["stdio"]
        # An `env` adds to the client's default environment, as MCP hosts do; `cwd` is
        # where the server starts.
        target = StdioServerParameters(
            command=command, args=args, env=server.get("env"), cwd=server.get("cwd")
        )
    elif "headers" in server:
        http = httpx2.AsyncClient(headers=server["headers"], event_hooks={"response": [record]})
        target = streamable_http_client(server["url"], http_client=http)
    else:
        target = server["url"]
    report = {"steps": []}
    try:
        async with Client(target, read_timeout_seconds=30) as client:
            report["protocol"] = client.session.protocol_version
            info = client.server_info
            if info is not None:
                report["server"] = {"name": info.name, "version": info.version}
            for each in plan["steps"]:
                report["steps"].append(await step(client, each))
    except Exception as refused:
        if not plan.get("may_be_refused"):
            raise
        error = "; ".join(str(leaf) for leaf in leaves(refused))
        report = {"refused": {"http_statuses": statuses, "error": error}}
    json.dump(report, sys.stdout)


anyio.run(main)
