"""Installed-package check with the official Python SDK (PyPI `mcp`): launch a server
over stdio, list its resources, read one, and compare its text.

    list_read.py --uri URI --text TEXT [--cwd DIR] -- COMMAND [ARG]...

Exits 0 when URI is listed and reads as TEXT, 1 otherwise (saying why).
"""

import argparse
import asyncio
import sys

from mcp import Client, StdioServerParameters

TIMEOUT = 60


async def check(command, cwd, uri: str, text: str) -> str | None:
    server = StdioServerParameters(command=command[0], args=command[1:], cwd=cwd)
    async with Client(server, mode="legacy") as client:
        listed = await client.list_resources()
        uris = [str(r.uri) for r in listed.resources]
        if uri not in uris:
            return f"{uri} is not listed: {uris}"
        read = await client.read_resource(uri)
        got = getattr(read.contents[0], "text", None)
        if got != text:
            return f"{uri} reads {got!r}, not {text!r}"
    return None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--uri", required=True)
    ap.add_argument("--text", required=True)
    ap.add_argument("--cwd")
    ap.add_argument("command", nargs="+")
    a = ap.parse_args()
    try:
        problem = asyncio.run(asyncio.wait_for(check(a.command, a.cwd, a.uri, a.text), TIMEOUT))
    except Exception as e:  # the report is the exit code and this line
        problem = f"failed: {e!r}"
    what = f"python: {' '.join(a.command)}"
    if problem:
        print(f"{what}: {problem}", file=sys.stderr)
        return 1
    print(f"{what}: listed and read {a.uri}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
