#!/usr/bin/env python3
"""A hostile MCP server on stdio, for the browser tests of `rsrc ui`.

Every name, title, description, text, Markdown document, SVG, icon, completion value and
error message it sends tries to run script in the page (each attempt sets
`window.__pwned`). It speaks the 2025-11-25 revision (`server/discover` is refused, so
clients fall back to `initialize`), declares SEP-2564 filtering and applies it (fnmatch
globs: fields ANDed, patterns ORed), and logs every request it receives, one JSON line
each, to the file named by HOSTILE_LOG. Reading `hostile:///die` makes it exit, reading
`hostile:///hang` makes it stop answering. With HOSTILE_NO_FILTERING set it declares no
filtering (and gets none), as a server that predates SEP-2564.
"""

import base64
import fnmatch
import json
import os
import sys
import time

PWN = 'window.__pwned=1'
SCRIPT = f'<script>{PWN}</script>'
IMG = f'<img src=x onerror="{PWN}">'
SVG = (f'<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40" onload="{PWN}">'
       f'{SCRIPT}<rect width="40" height="40" fill="#c33"/></svg>')
MARKDOWN = f"""# Hostile document {SCRIPT}

{SCRIPT}

{IMG}

<iframe srcdoc="{SCRIPT}"></iframe>

<svg onload="{PWN}"><script>{PWN}</script></svg>

[a javascript link](javascript:{PWN}) <a href="javascript:{PWN}">raw</a>
<a href="data:text/html,{SCRIPT}">data</a> [the web](https://example.com/)

<div onmouseover="{PWN}" style="background:url(javascript:{PWN})">hover</div>
"""


def resource(uri, name, mime, **more):
    r = {'uri': uri, 'name': name, 'mimeType': mime}
    r.update(more)
    return r


RESOURCES = [
    (resource('hostile:///docs/evil.md', f'evil.md {SCRIPT}', 'text/markdown',
              title=f'Evil {IMG}', description=f'<b onmouseover="{PWN}">described</b>',
              icons=[{'src': f'javascript:{PWN}'},
                     {'src': 'data:image/svg+xml;base64,' + base64.b64encode(SVG.encode()).decode()}],
              annotations={'audience': ['assistant'], 'priority': 0.9}),
     {'text': MARKDOWN}),
    (resource('hostile:///docs/guide.md', 'guide.md', 'text/markdown',
              annotations={'audience': ['user', 'assistant'], 'priority': 0.6}),
     {'text': '# Guide\n\nPlain and safe.\n'}),
    (resource('hostile:///img/evil.svg', f'evil.svg {IMG}', 'image/svg+xml'),
     {'blob': base64.b64encode(SVG.encode()).decode()}),
    (resource('hostile:///text/evil.txt', 'evil.txt', 'text/plain'), {'text': f'{SCRIPT}\n{IMG}\n'}),
    (resource('hostile:///text/evil.html', 'evil.html', 'text/html'), {'text': f'<html>{SCRIPT}</html>'}),
    (resource('hostile:///json/evil.json', 'evil.json', 'application/json'),
     {'text': json.dumps({IMG: SCRIPT, 'list': [SCRIPT, {'deep': IMG}]})}),
    (resource('hostile:///error', f'error {IMG}', 'text/plain'), None),
    (resource('hostile:///die', 'die', 'text/plain'), None),
    (resource('hostile:///hang', 'hang', 'text/plain'), None),
]

PAGE = 3


def matches(globs, value):
    return globs is None or len(globs) == 0 or any(fnmatch.fnmatchcase(value, g) for g in globs)


def listing(params):
    f = params.get('filter') or {}
    items = [r for r, _ in RESOURCES
             if matches(f.get('namePatterns'), r['name']) and matches(f.get('uriPatterns'), r['uri'])]
    start = int(params.get('cursor') or 0)
    page = {'resources': items[start:start + PAGE]}
    if start + PAGE < len(items):
        page['nextCursor'] = str(start + PAGE)
    return page


def answer(method, params):
    if method == 'initialize':
        resources = {'subscribe': True, 'listChanged': True}
        if not os.environ.get('HOSTILE_NO_FILTERING'):
            resources['filtering'] = {'supported': ['namePatterns', 'uriPatterns']}
        return {'protocolVersion': '2025-11-25',
                'capabilities': {'resources': resources, 'completions': {}},
                'serverInfo': {'name': f'hostile {SCRIPT}', 'version': IMG},
                'instructions': SCRIPT}
    if method == 'resources/list':
        return listing(params)
    if method == 'resources/templates/list':
        return {'resourceTemplates': [{'uriTemplate': 'hostile:///t/{name}', 'name': f'template {SCRIPT}',
                                       'description': IMG, 'mimeType': 'text/plain'}]}
    if method == 'resources/read':
        uri = params.get('uri')
        if uri == 'hostile:///die':
            sys.exit(0)
        if uri == 'hostile:///hang':
            time.sleep(3600)
        if uri == 'hostile:///error':
            raise Failure(-32603, f'failed {IMG}', {'why': SCRIPT})
        if uri.startswith('hostile:///t/'):
            return {'contents': [{'uri': uri, 'mimeType': 'text/plain', 'text': f'{uri} {SCRIPT}'}]}
        for r, body in RESOURCES:
            if r['uri'] == uri and body is not None:
                return {'contents': [dict(r, **body)]}
        raise Failure(-32002, f'not found {IMG}', {'uri': uri})
    if method == 'completion/complete':
        return {'completion': {'values': [IMG, 'alpha', 'beta'], 'total': 3, 'hasMore': False}}
    if method in ('resources/subscribe', 'resources/unsubscribe', 'ping'):
        return {}
    raise Failure(-32601, f'method not found {SCRIPT}')


class Failure(Exception):
    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def main():
    log = open(os.environ['HOSTILE_LOG'], 'a', encoding='utf-8') if os.environ.get('HOSTILE_LOG') else None
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if log:
            log.write(json.dumps({'method': msg.get('method'), 'params': msg.get('params')}) + '\n')
            log.flush()
        if 'id' not in msg or 'method' not in msg:
            continue
        reply = {'jsonrpc': '2.0', 'id': msg['id']}
        try:
            reply['result'] = answer(msg['method'], msg.get('params') or {})
        except Failure as f:
            reply['error'] = {'code': f.code, 'message': f.message}
            if f.data is not None:
                reply['error']['data'] = f.data
        sys.stdout.write(json.dumps(reply) + '\n')
        sys.stdout.flush()


if __name__ == '__main__':
    main()
