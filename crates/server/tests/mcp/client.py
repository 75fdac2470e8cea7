"""Drives a Steward MCP server with the official MCP Python SDK and prints, as one JSON object, what it saw.

    python client.py stdio COMMAND [ARG...] < plan.json    # starts COMMAND and speaks MCP on its stdin/stdout
    python client.py http URL < plan.json                  # streamable HTTP

The plan: {"mode": "auto" | "legacy", "calls": [{"name": ..., "arguments": {...}}], "read": [URI, ...]}.
The Rust tests make the plan and check the answer; this script only talks and reports.
"""

import asyncio
import json
import os
import sys

from mcp import Client, MCPError, StdioServerParameters


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def main() -> None:
    plan = json.load(sys.stdin)
    kind, target = sys.argv[1], sys.argv[2]
    if kind == "stdio":
        server = StdioServerParameters(command=target, args=sys.argv[3:], env=dict(os.environ))
    else:
        server = target
    out = {}
    async with Client(server, mode=plan.get("mode", "auto")) as client:
        out["protocol_version"] = client.protocol_version
        out["server"] = dump(client.server_info) if client.server_info else None
        out["tools"] = [dump(tool) for tool in (await client.list_tools()).tools]
        out["calls"] = []
        for call in plan.get("calls", []):
            try:
                result = await client.call_tool(call["name"], call.get("arguments", {}))
                out["calls"].append(
                    {
                        "is_error": result.is_error,
                        "text": "".join(c.text for c in result.content if c.type == "text"),
                        "structured": result.structured_content,
                    }
                )
            except MCPError as error:
                out["calls"].append({"protocol_error": str(error)})
        out["resources"] = [dump(r) for r in (await client.list_resources()).resources]
        out["templates"] = [dump(t) for t in (await client.list_resource_templates()).resource_templates]
        out["reads"] = []
        for uri in plan.get("read", []):
            try:
                contents = (await client.read_resource(uri)).contents
                out["reads"].append({"text": "".join(getattr(c, "text", "") for c in contents)})
            except MCPError as error:
                out["reads"].append({"protocol_error": str(error)})
    print(json.dumps(out))


asyncio.run(main())
