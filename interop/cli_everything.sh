#!/usr/bin/env bash
# `rsrc ls / read / stat / templates / complete / watch` against a third-party server, the
# reference server @modelcontextprotocol/server-everything, over stdio and Streamable HTTP.
# Usage: cli_everything.sh RSRC-BINARY EVERYTHING-INDEX-JS
# Its resources: demo://resource/static/document/*.md (text), the templates
# demo://resource/dynamic/{text,blob}/{resourceId} (integer ids, completed), and simulated
# updates of subscribed URIs every 5 s once its toggle-subscriber-updates tool is called on
# the subscribing connection.
set -uo pipefail
rsrc=$1
everything=(node "$2")
here="$(cd "$(dirname "$0")" && pwd)"
work=$(mktemp -d)
server=""
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

failures=0
check() { # NAME COMMAND... : the command must succeed
    local name=$1
    shift
    if "$@"; then
        echo "ok    $name"
    else
        echo "FAIL  $name" >&2
        failures=$((failures + 1))
    fi
}

doc="demo://resource/static/document/features.md"
text_template='demo://resource/dynamic/text/{resourceId}'
blob="demo://resource/dynamic/blob/7"

# Runs rsrc with ARGS, its stdout into $work/out and its exit code into $code.
rs() {
    "$rsrc" "$@" >"$work/out" 2>>"$work/stderr"
    code=$?
}

suite() { # LABEL TARGET-ARGS... (a URL, or -- and a command)
    local label=$1
    shift
    local -a url=() cmd=()
    if [ "$1" = "--" ]; then cmd=("$@"); else url=("$1"); fi

    rs ls "${url[@]}" "${cmd[@]}"
    check "$label ls lists the static documents" grep -q "features.md" "$work/out"
    rs ls --json "${url[@]}" "${cmd[@]}"
    check "$label ls --json is a JSON array of resources" python3 -c '
import json, sys
items = json.load(open(sys.argv[1]))
assert isinstance(items, list) and any(r["uri"] == sys.argv[2] for r in items), items
' "$work/out" "$doc"
    rs ls --filter "features*" "${url[@]}" "${cmd[@]}"
    check "$label ls --filter keeps only matches" [ "$(tail -n +2 "$work/out" | wc -l)" = 1 ]
    rs read "${url[@]}" "$doc" "${cmd[@]}"
    check "$label read prints the text document" grep -q "Features" "$work/out"
    rs read --json "${url[@]}" "$blob" "${cmd[@]}"
    check "$label read --json shows the blob entry" grep -q '"blob"' "$work/out"
    rs read -o "$work/blob.bin" "${url[@]}" "$blob" "${cmd[@]}"
    # The blob is the base64 of a text naming the id and the time it was made.
    check "$label read -o writes a blob's decoded bytes" grep -q "^Resource 7: This is a base64 blob" "$work/blob.bin"
    rs stat "${url[@]}" "$doc" "${cmd[@]}"
    check "$label stat shows the metadata" grep -q "text/markdown" "$work/out"
    rs templates "${url[@]}" "${cmd[@]}"
    check "$label templates lists the dynamic templates" grep -qF "$text_template" "$work/out"
    rs complete "${url[@]}" "$text_template" resourceId 1 "${cmd[@]}"
    check "$label complete offers resource ids" grep -qx 1 "$work/out"
    rs read "${url[@]}" demo://resource/missing "${cmd[@]}"
    check "$label a server error exits 1" [ "$code" = 1 ]
}

# stdio: the server is started by rsrc itself.
suite stdio -- "${everything[@]}" stdio
timeout 60 "$rsrc" watch --count 1 "$doc" -- \
    python3 "$here/inject_tool_call.py" toggle-subscriber-updates -- "${everything[@]}" stdio \
    >"$work/out" 2>>"$work/stderr"
check "stdio watch prints the update after the tool call" grep -q "updated .*$doc" "$work/out"

# Streamable HTTP.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
PORT=$port "${everything[@]}" streamableHttp >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
    sleep 0.1
done
url="http://127.0.0.1:$port/mcp"
suite http "$url"
# The update goes to the session that subscribed: call the tool with the session id
# that `rsrc watch -vv` logs.
timeout 60 "$rsrc" watch -vv --count 1 "$url" "$doc" >"$work/watch.out" 2>"$work/watch.log" &
watcher=$!
session=""
for _ in $(seq 100); do
    session=$(grep -o 'session="[^"]*"' "$work/watch.log" | head -1 | cut -d'"' -f2)
    if [ -n "$session" ] && grep -q "resources/subscribe" "$work/server.log" 2>/dev/null; then break; fi
    sleep 0.1
done
sleep 0.5
curl -s -o /dev/null -X POST "$url" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H "Mcp-Session-Id: $session" \
    -H 'MCP-Protocol-Version: 2025-11-25' \
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"toggle-subscriber-updates","arguments":{}}}'
wait "$watcher"
check "http watch prints the update after the tool call" grep -q "updated .*$doc" "$work/watch.out"

if [ "$failures" != 0 ]; then
    echo "cli_everything: $failures check(s) failed; rsrc stderr:" >&2
    cat "$work/stderr" "$work/watch.log" >&2
    echo "server log:" >&2
    cat "$work/server.log" >&2
    exit 1
fi
