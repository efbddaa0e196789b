"""The benchmark's reference server on the official MCP Python SDK (`mcp`; see
bench/servers/README.md): every regular file under ROOT as a file:/// resource, over
stdio, or with --http 127.0.0.1:PORT over Streamable HTTP at /mcp with stateful sessions
(served by uvicorn, as the SDK's own runner does).

Invariant: it serves only the regular files under ROOT, lists the index built once at
startup and reads each file from disk at every request; stdout carries only protocol
messages (logs go to stderr).

It uses the SDK's low-level Server, not MCPServer (FastMCP): MCPServer keeps one
resource object per file and answers resources/list in one page, converting each
object at every request; the low-level handlers page a prebuilt list with a cursor and
look a read up in a dict.
"""

from __future__ import annotations

import base64
import os
import signal
import sys

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

PAGE_SIZE = 1000
PREFIX = "file:///"

# The benchmark's fixed extension table, the same in every reference server.
MIME = {
    "txt": "text/plain", "md": "text/markdown", "html": "text/html", "htm": "text/html",
    "css": "text/css", "csv": "text/csv", "js": "text/javascript", "mjs": "text/javascript",
    "json": "application/json", "xml": "application/xml", "png": "image/png",
    "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "svg": "image/svg+xml",
    "pdf": "application/pdf",
}  # fmt: skip

# RFC 3986 unreserved and sub-delims characters and "/", kept as they are.
KEEP = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=/")


def mime_of(name: str) -> str:
    base = name.rsplit("/", 1)[-1]
    dot = base.rfind(".")
    if dot <= 0:
        return "application/octet-stream"
    return MIME.get(base[dot + 1 :].lower(), "application/octet-stream")


def uri_of(rel: bytes) -> str:
    return PREFIX + "".join(chr(b) if b in KEEP else f"%{b:02X}" for b in rel)


def percent_decode(text: str) -> bytes | None:
    raw = text.encode("utf-8")
    out = bytearray()
    i = 0
    while i < len(raw):
        if raw[i] == 0x25:  # '%'
            pair = raw[i + 1 : i + 3]
            if len(pair) != 2 or not all(c in b"0123456789abcdefABCDEF" for c in pair):
                return None
            out.append(int(pair, 16))
            i += 3
        else:
            out.append(raw[i])
            i += 1
    return bytes(out)


class Index:
    """The regular files under the root (symlinks not followed), walked once."""

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)
        files: list[tuple[bytes, str, int]] = []
        stack = [(os.fsencode(self.root), b"")]
        while stack:
            directory, rel = stack.pop()
            with os.scandir(directory) as entries:
                for entry in entries:
                    child = rel + b"/" + entry.name if rel else entry.name
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((entry.path, child))
                    elif entry.is_file(follow_symlinks=False):
                        size = entry.stat(follow_symlinks=False).st_size
                        files.append((child, os.fsdecode(entry.path), size))
        files.sort()
        self.resources: list[types.Resource] = []
        self.by_uri: dict[str, tuple[str, str]] = {}
        for rel, path, size in files:
            uri = uri_of(rel)
            name = os.fsdecode(rel.rsplit(b"/", 1)[-1])
            mime = mime_of(name)
            self.resources.append(types.Resource(uri=uri, name=name, mime_type=mime, size=size))
            self.by_uri[uri] = (path, mime)

    def resolve(self, uri: str) -> tuple[str, str] | None:
        """What file:///{+path} names outside the index: a regular file under the root."""
        if not uri.startswith(PREFIX):
            return None
        rel = percent_decode(uri[len(PREFIX) :])
        if rel is None:
            return None
        segments = rel.split(b"/")
        if b".." in segments:
            raise MCPError(types.INVALID_PARAMS, f"{uri} is outside the served directory")
        path = os.path.join(os.fsencode(self.root), *[s for s in segments if s not in (b"", b".")])
        try:
            if not os.path.isfile(path) or os.path.islink(path):
                return None
        except (OSError, ValueError):
            return None
        if not os.path.realpath(path).startswith(os.fsencode(self.root + os.sep)):
            raise MCPError(types.INVALID_PARAMS, f"{uri} is outside the served directory")
        return os.fsdecode(path), mime_of(os.fsdecode(path))


def make_server(index: Index) -> Server:
    total = len(index.resources)
    template = types.ResourceTemplate(
        uri_template="file:///{+path}",
        name="file",
        description="Any regular file under the served directory, by its relative path",
    )

    async def list_resources(_ctx, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        cursor = params.cursor if params is not None else None
        start = 0
        if cursor is not None:
            if not cursor.isdigit() or int(cursor) > total:
                raise MCPError(types.INVALID_PARAMS, "invalid cursor")
            start = int(cursor)
        end = min(start + PAGE_SIZE, total)
        return types.ListResourcesResult(
            resources=index.resources[start:end],
            next_cursor=str(end) if end < total else None,
        )

    async def list_templates(_ctx, _params) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[template])

    async def read_resource(_ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = params.uri
        found = index.by_uri.get(uri) or index.resolve(uri)
        if found is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown resource: {uri}", {"uri": uri})
        path, mime = found
        try:
            data = await anyio.Path(path).read_bytes()
        except OSError:
            raise MCPError(types.INVALID_PARAMS, f"Unknown resource: {uri}", {"uri": uri}) from None
        if mime.startswith("text/"):
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                pass
            else:
                return types.ReadResourceResult(
                    contents=[types.TextResourceContents(uri=uri, mime_type=mime, text=text)]
                )
        blob = base64.b64encode(data).decode("ascii")
        return types.ReadResourceResult(contents=[types.BlobResourceContents(uri=uri, mime_type=mime, blob=blob)])

    return Server(
        "mcp-bench-python",
        version="0.1.0",
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
    )


async def serve_stdio(server: Server) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve_http(server: Server, address: str) -> None:
    import uvicorn

    host, _, port = address.rpartition(":")
    # Stateful sessions, SSE replies: the SDK's defaults.
    app = server.streamable_http_app(host=host)
    config = uvicorn.Config(app, host=host, port=int(port), log_level="warning", access_log=False)
    print(f"mcp-bench-python: listening on http://{address}/mcp", file=sys.stderr, flush=True)
    # uvicorn exits on SIGINT and SIGTERM.
    uvicorn.Server(config).run()


def main() -> None:
    args = sys.argv[1:]
    http = None
    if "--http" in args:
        at = args.index("--http")
        if at + 1 >= len(args):
            sys.exit("usage: server.py ROOT [--http 127.0.0.1:PORT]")
        http = args[at + 1]
        del args[at : at + 2]
    if len(args) != 1:
        sys.exit("usage: server.py ROOT [--http 127.0.0.1:PORT]")
    server = make_server(Index(args[0]))
    if http is not None:
        serve_http(server, http)
    else:
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        try:
            import uvloop  # noqa: F401
        except ImportError:
            anyio.run(serve_stdio, server)
        else:
            anyio.run(serve_stdio, server, backend_options={"use_uvloop": True})


if __name__ == "__main__":
    main()
