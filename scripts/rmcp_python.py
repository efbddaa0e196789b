"""The official Python SDK client (PyPI `mcp`) against the rsrc-rmcp examples over stdio,
in one era (`legacy`: initialize; `2026-07-28`: server/discover), run by scripts/rmcp:

    rmcp_python.py --mode legacy|2026-07-28 notion COMMAND...
    rmcp_python.py --mode legacy|2026-07-28 fs DIR COMMAND...

`notion`: the example's tool and resources on one server, listing, templates, reads,
completion, not-found codes, the read cache's single flight, and a `create_page` call
heard as `notifications/resources/list_changed` (the page then listed and readable).
`fs` (DIR holds `watched.txt`, `blob.bin` and more files than one page lists): listing
with cursors, a blob read, and a write to `watched.txt` heard as
`notifications/resources/updated` over subscribe (legacy) or listen (2026-07-28).

Exits 0 when every check passes; prints each failure on stderr and exits 1 otherwise.
"""

import argparse
import asyncio
import base64
import os
import sys
import time
import warnings

import mcp_types as types
from mcp import Client, MCPError, StdioServerParameters
from mcp.shared.subscriptions import ResourcesListChanged, ResourceUpdated

TIMEOUT = 20
# The fake Notion backend's latency in this run (scripts/rmcp sets NOTION_FAKE_LATENCY_MS).
LATENCY = float(os.environ.get("NOTION_FAKE_LATENCY_MS", "100")) / 1000

failures: list[str] = []


def check(ok: bool, what: str) -> None:
    if not ok:
        failures.append(what)


def not_found_code(mode: str) -> int:
    return -32002 if mode == "legacy" else -32602


async def walk(client: Client) -> tuple[list[str], int]:
    uris, pages, cursor = [], 0, None
    while True:
        page = await client.list_resources(cursor=cursor, cache_mode="bypass")
        pages += 1
        uris += [str(r.uri) for r in page.resources]
        cursor = page.next_cursor
        if cursor is None or pages > 100:
            return uris, pages


async def expect_error(call, code: int, uri: str, what: str) -> None:
    try:
        await call
    except MCPError as e:
        check(e.error.code == code, f"{what}: code {e.error.code}, expected {code}")
        check((e.error.data or {}).get("uri") == uri, f"{what}: data {e.error.data}")
        return
    check(False, f"{what}: no error")


async def notion(server, mode: str) -> None:
    heard = asyncio.Queue()

    async def on_message(message) -> None:
        if isinstance(message, types.ResourceListChangedNotification):
            heard.put_nowait("list_changed")

    async with Client(server, mode=mode, message_handler=on_message) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        check(tools == {"create_page"}, f"tools: {tools}")
        uris, _ = await walk(client)
        for uri in ["notion://workspace/info", "notion://pages/abc123", "notion://pages/def456"]:
            check(uri in uris, f"{uri} not listed: {uris}")
        templates = (await client.list_resource_templates()).resource_templates
        check(len(templates) == 2, f"templates: {templates}")
        page = await client.read_resource("notion://pages/abc123")
        check("Project Roadmap" in page.contents[0].text, f"page: {page}")
        done = await client.complete(
            types.ResourceTemplateReference(type="ref/resource", uri="notion://pages/{pageId}"),
            {"name": "pageId", "value": "d"},
        )
        check(done.completion.values == ["def456"], f"completion: {done.completion}")
        await expect_error(
            client.read_resource("notion://pages/nope"),
            not_found_code(mode),
            "notion://pages/nope",
            "not found",
        )
        # The cache's single flight: concurrent cold reads make one backend call, which
        # serves one call at a time; one call each would take 6 latencies.
        start = time.monotonic()
        reads = await asyncio.gather(
            *[client.read_resource("notion://pages/def456", cache_mode="bypass") for _ in range(6)]
        )
        took = time.monotonic() - start
        check(all("Launch Checklist" in r.contents[0].text for r in reads), "page reads")
        check(took < 3 * LATENCY, f"6 concurrent cold reads took {took:.2f} s: no single flight")
        start = time.monotonic()
        await client.read_resource("notion://pages/abc123", cache_mode="bypass")
        took = time.monotonic() - start
        check(took < LATENCY, f"a cached page took {took:.2f} s")

        if mode == "legacy":
            created = await client.call_tool("create_page", {"title": "Meeting notes"})
            got = await asyncio.wait_for(heard.get(), TIMEOUT)
            check(got == "list_changed", f"heard {got}")
        else:
            async with client.listen(resources_list_changed=True) as sub:
                check(sub.honored.resources_list_changed is True, f"ack {sub.honored}")
                created = await client.call_tool("create_page", {"title": "Meeting notes"})

                async def first() -> object:
                    async for event in sub:
                        return event

                event = await asyncio.wait_for(first(), TIMEOUT)
                check(isinstance(event, ResourcesListChanged), f"event {event}")
        new_id = (created.structured_content or {}).get("id")
        text = [c.text for c in created.content if isinstance(c, types.TextContent)]
        check(bool(new_id) and text == [new_id], f"create_page: {created}")
        uri = f"notion://pages/{new_id}"
        uris, _ = await walk(client)
        check(uri in uris, f"{uri} not listed after create_page")
        page = await client.read_resource(uri, cache_mode="bypass")
        check("Meeting notes" in page.contents[0].text, f"new page: {page}")


async def fs(server, mode: str, directory: str) -> None:
    files = sum(len(f) for _, _, f in os.walk(directory))
    heard = asyncio.Queue()

    async def on_message(message) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            heard.put_nowait(str(message.params.uri))

    async with Client(server, mode=mode, message_handler=on_message) as client:
        uris, pages = await walk(client)
        check(len(uris) == files and len(set(uris)) == files, f"listed {len(uris)} of {files}")
        check(pages >= 2, f"{pages} page(s): no cursor followed")
        blob = (await client.read_resource("file:///blob.bin")).contents[0]
        with open(os.path.join(directory, "blob.bin"), "rb") as f:
            check(base64.b64decode(blob.blob) == f.read(), "blob.bin")
        await expect_error(
            client.read_resource("file:///missing.txt"),
            not_found_code(mode),
            "file:///missing.txt",
            "not found",
        )
        watched = "file:///watched.txt"

        def touch() -> None:
            with open(os.path.join(directory, "watched.txt"), "a", encoding="utf-8") as f:
                f.write("changed\n")

        if mode == "legacy":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await client.subscribe_resource(watched)
            touch()
            got = await asyncio.wait_for(heard.get(), TIMEOUT)
            check(got == watched, f"updated {got}")
        else:
            async with client.listen(resource_subscriptions=[watched]) as sub:
                honored = list(sub.honored.resource_subscriptions or [])
                check(watched in honored, f"ack {honored}")
                touch()

                async def first() -> object:
                    async for event in sub:
                        return event

                event = await asyncio.wait_for(first(), TIMEOUT)
                check(isinstance(event, ResourceUpdated) and event.uri == watched, f"event {event}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["legacy", "2026-07-28"], required=True)
    ap.add_argument("example", choices=["notion", "fs"])
    ap.add_argument("rest", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    if a.example == "fs":
        directory, command = a.rest[0], a.rest[1:]
    else:
        directory, command = None, a.rest
    server = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    run = notion(server, a.mode) if directory is None else fs(server, a.mode, directory)
    try:
        asyncio.run(asyncio.wait_for(run, 4 * TIMEOUT))
    except Exception as e:  # noqa: BLE001 - any failure is a failed check
        failures.append(f"{type(e).__name__}: {e!r}")
    what = f"python {a.example} {a.mode} stdio"
    for f in failures:
        print(f"{what}: {f}", file=sys.stderr)
    print(f"{what}: {'ok' if not failures else 'FAILED'}", file=sys.stderr)
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
