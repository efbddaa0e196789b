"""Interop check of the tools bridge with the official Python SDK (PyPI `mcp`): against
`rsrc serve --tools DIR`, list the tools, find a file with `search_resources`, read it
with `read_resource` and check its text, in the legacy and the 2026-07-28 mode.

    python_tools.py --server 'stdio:RSRC serve --tools DIR' | --server URL
                    --mode legacy|2026-07-28 --uri URI --query WORDS --text TEXT

Exits 0 when every step gives what is expected, 1 otherwise.
"""

import argparse
import asyncio
import shlex
import sys

import mcp_types as types
from mcp import Client, StdioServerParameters

TIMEOUT = 20
TOOLS = {"list_resources", "read_resource", "search_resources", "list_resource_templates"}


def target(spec: str):
    if spec.startswith("stdio:"):
        argv = shlex.split(spec[len("stdio:"):])
        return StdioServerParameters(command=argv[0], args=argv[1:])
    return spec


def fail(what: str) -> bool:
    print(what, file=sys.stderr)
    return False


async def check(server, mode: str, uri: str, query: str, text: str) -> bool:
    async with Client(server, mode=mode) as client:
        listed = await client.list_tools()
        names = {t.name for t in listed.tools}
        if names != TOOLS:
            return fail(f"tools: {sorted(names)}")
        found = await client.call_tool("search_resources", {"query": query})
        if found.is_error:
            return fail(f"search failed: {found.content}")
        uris = [r["uri"] for r in (found.structured_content or {}).get("resources", [])]
        if uri not in uris:
            return fail(f"search for {query!r} found {uris}")
        links = [c.uri for c in found.content if isinstance(c, types.ResourceLink)]
        if uri not in [str(u) for u in links]:
            return fail(f"no resource_link to {uri}: {found.content}")
        read = await client.call_tool("read_resource", {"uri": uri})
        embedded = [c for c in read.content if isinstance(c, types.EmbeddedResource)]
        if read.is_error or not embedded:
            return fail(f"read failed: {read.content}")
        got = getattr(embedded[0].resource, "text", None)
        if got != text:
            return fail(f"read {got!r}, expected {text!r}")
        missing = await client.call_tool("read_resource", {"uri": uri + ".missing"})
        if not missing.is_error:
            return fail(f"a missing resource was not an error: {missing.content}")
        return True


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--mode", choices=["legacy", "2026-07-28"], required=True)
    ap.add_argument("--uri", required=True)
    ap.add_argument("--query", required=True)
    ap.add_argument("--text", required=True)
    a = ap.parse_args()
    what = f"python tools {a.mode} {'stdio' if a.server.startswith('stdio:') else 'http'}"
    try:
        ok = asyncio.run(
            asyncio.wait_for(check(target(a.server), a.mode, a.uri, a.query, a.text), TIMEOUT)
        )
    except Exception as e:  # noqa: BLE001 - any failure is a failed check
        ok = fail(f"{type(e).__name__}: {e}")
    print(f"{what}: {'ok' if ok else 'FAILED'}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
