"""Interop check with the official Python SDK (PyPI `mcp`): subscribe to one file served by
`rsrc serve`, change the file, and expect `notifications/resources/updated` for it.

    python_client.py --server 'stdio:RSRC serve DIR' | --server URL
                     --mode legacy|listen --file PATH --uri URI

`legacy` uses the initialize handshake and `resources/subscribe`; `listen` speaks
2026-07-28 and uses `subscriptions/listen`. Exits 0 when the update arrives, 1 otherwise.
"""

import argparse
import asyncio
import shlex
import sys
import warnings

import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.subscriptions import ResourceUpdated

TIMEOUT = 10


def target(spec: str):
    if spec.startswith("stdio:"):
        argv = shlex.split(spec[len("stdio:"):])
        return StdioServerParameters(command=argv[0], args=argv[1:])
    return spec


def touch(path: str) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write("changed by the interop test\n")


async def legacy(server, path: str, uri: str) -> bool:
    updated = asyncio.Event()

    async def on_message(message) -> None:
        if isinstance(message, types.ResourceUpdatedNotification) and message.params.uri == uri:
            updated.set()

    async with Client(server, mode="legacy", message_handler=on_message) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await client.subscribe_resource(uri)
        touch(path)
        await asyncio.wait_for(updated.wait(), TIMEOUT)
        return True


async def listen(server, path: str, uri: str) -> bool:
    async with Client(server, mode="2026-07-28") as client:
        async with client.listen(resource_subscriptions=[uri]) as sub:
            honored = list(sub.honored.resource_subscriptions or [])
            if uri not in honored:
                print(f"not acknowledged: {honored}", file=sys.stderr)
                return False
            touch(path)

            async def first_update() -> bool:
                async for event in sub:
                    if isinstance(event, ResourceUpdated) and event.uri == uri:
                        return True
                return False

            return await asyncio.wait_for(first_update(), TIMEOUT)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--mode", choices=["legacy", "listen"], required=True)
    ap.add_argument("--file", required=True)
    ap.add_argument("--uri", required=True)
    a = ap.parse_args()
    run = legacy if a.mode == "legacy" else listen
    what = f"python {a.mode} {'stdio' if a.server.startswith('stdio:') else 'http'}"
    try:
        ok = asyncio.run(run(target(a.server), a.file, a.uri))
    except Exception as e:  # the report is the exit code and this line
        print(f"{what}: failed: {e!r}", file=sys.stderr)
        return 1
    print(f"{what}: {'received' if ok else 'did not receive'} notifications/resources/updated for {a.uri}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
