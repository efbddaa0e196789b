#!/usr/bin/env python3
"""A stdio pass-through between an MCP client and a server that, once the server has
answered the client's first resources/subscribe, calls one of the server's tools on the
same connection (the client never sees that exchange).

Usage: inject_tool_call.py TOOL -- SERVER-COMMAND...

Used by scripts/interop to make @modelcontextprotocol/server-everything send resource
updates to `rsrc watch`: its toggle-subscriber-updates tool must be called on the
connection that subscribed.
"""
import json
import subprocess
import sys
import threading

OWN_ID = "inject-tool-call"


def main() -> int:
    tool = sys.argv[1]
    command = sys.argv[sys.argv.index("--") + 1 :]
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    subscribe_ids = set()
    lock = threading.Lock()
    injected = False

    def to_server(line: bytes) -> None:
        with lock:
            server.stdin.write(line)
            server.stdin.flush()

    def client_to_server() -> None:
        for line in sys.stdin.buffer:
            try:
                message = json.loads(line)
                if message.get("method") == "resources/subscribe":
                    subscribe_ids.add(json.dumps(message.get("id")))
            except (ValueError, AttributeError):
                pass
            to_server(line)
        server.stdin.close()

    threading.Thread(target=client_to_server, daemon=True).start()
    for line in server.stdout:
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if isinstance(message, dict) and message.get("id") == OWN_ID:
            print(f"inject_tool_call: {tool} answered", file=sys.stderr)
            continue
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
        if (
            not injected
            and isinstance(message, dict)
            and "result" in message
            and json.dumps(message.get("id")) in subscribe_ids
        ):
            injected = True
            call = {
                "jsonrpc": "2.0",
                "id": OWN_ID,
                "method": "tools/call",
                "params": {"name": tool, "arguments": {}},
            }
            to_server((json.dumps(call) + "\n").encode())
    return server.wait()


if __name__ == "__main__":
    sys.exit(main())
