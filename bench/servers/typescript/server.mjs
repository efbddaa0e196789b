// The benchmark's reference server on the official MCP TypeScript SDK
// (@modelcontextprotocol/sdk; bench/servers/README.md): every regular file under ROOT
// as a file:/// resource, over stdio, or with --http 127.0.0.1:PORT over Streamable HTTP
// at /mcp with stateful sessions.
//
// Invariant: it serves only the regular files under ROOT, lists the index built once at
// startup and reads each file from disk at every request; stdout carries only protocol
// messages (logs go to stderr).
//
// It uses the SDK's low-level Server, not McpServer: McpServer is a layer over the same
// Server whose resources/list always returns one page and whose reads go through the
// template's URI matching; the low-level handlers page the listing with a cursor and look
// a read up in a Map.

import { randomUUID } from 'node:crypto';
import { readdirSync, statSync, lstatSync, realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import path from 'node:path';

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  ErrorCode,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  isInitializeRequest,
} from '@modelcontextprotocol/sdk/types.js';

const PAGE_SIZE = 1000;
const PREFIX = 'file:///';

// The benchmark's fixed extension table, the same in every reference server.
const MIME = {
  txt: 'text/plain', md: 'text/markdown', html: 'text/html', htm: 'text/html',
  css: 'text/css', csv: 'text/csv', js: 'text/javascript', mjs: 'text/javascript',
  json: 'application/json', xml: 'application/xml', png: 'image/png', jpg: 'image/jpeg',
  jpeg: 'image/jpeg', gif: 'image/gif', svg: 'image/svg+xml', pdf: 'application/pdf',
};

function mimeOf(name) {
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return 'application/octet-stream';
  return MIME[name.slice(dot + 1).toLowerCase()] ?? 'application/octet-stream';
}

// Keeps RFC 3986 unreserved and sub-delims characters and '/'; percent-encodes the
// rest, byte by byte of the UTF-8 form.
const KEEP = /^[A-Za-z0-9\-._~!$&'()*+,;=/]$/;
function uriOf(rel) {
  let out = PREFIX;
  for (const byte of Buffer.from(rel, 'utf8')) {
    const ch = String.fromCharCode(byte);
    out += byte < 128 && KEEP.test(ch) ? ch : '%' + byte.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

// Walks ROOT once (symlinks not followed): the listing, sorted by relative path, and a
// Map from URI to the file's path and MIME type.
function buildIndex(root) {
  const files = [];
  const walk = (dir, rel) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const childRel = rel ? `${rel}/${entry.name}` : entry.name;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full, childRel);
      else if (entry.isFile()) files.push({ rel: childRel, full, size: statSync(full).size });
    }
  };
  walk(root, '');
  files.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  const resources = [];
  const byUri = new Map();
  for (const file of files) {
    const uri = uriOf(file.rel);
    const mimeType = mimeOf(file.rel);
    resources.push({ uri, name: path.posix.basename(file.rel), mimeType, size: file.size });
    byUri.set(uri, { path: file.full, mimeType });
  }
  return { resources, byUri };
}

// What the template file:///{+path} names for a URI that is not in the index: a regular
// file under ROOT (one added since startup); refuses '..'.
function resolve(root, uri) {
  if (!uri.startsWith(PREFIX)) return null;
  let rel;
  try {
    rel = decodeURIComponent(uri.slice(PREFIX.length));
  } catch {
    return null;
  }
  const segments = rel.split('/');
  if (segments.includes('..')) {
    throw new McpError(ErrorCode.InvalidParams, `${uri} is outside the served directory`);
  }
  const full = path.join(root, ...segments.filter((s) => s !== '' && s !== '.'));
  try {
    if (!lstatSync(full).isFile()) return null;
    const real = realpathSync(full);
    if (!real.startsWith(root + path.sep)) {
      throw new McpError(ErrorCode.InvalidParams, `${uri} is outside the served directory`);
    }
  } catch (error) {
    if (error instanceof McpError) throw error;
    return null;
  }
  return { path: full, mimeType: mimeOf(full) };
}

function makeServer(root, index) {
  const server = new Server(
    { name: 'mcp-bench-typescript', version: '0.1.0' },
    { capabilities: { resources: {} } },
  );
  server.setRequestHandler(ListResourcesRequestSchema, (request) => {
    const cursor = request.params?.cursor;
    let start = 0;
    if (cursor !== undefined) {
      start = /^[0-9]+$/.test(cursor) ? Number(cursor) : -1;
      if (start < 0 || start > index.resources.length) {
        throw new McpError(ErrorCode.InvalidParams, 'invalid cursor');
      }
    }
    const end = Math.min(start + PAGE_SIZE, index.resources.length);
    const result = { resources: index.resources.slice(start, end) };
    if (end < index.resources.length) result.nextCursor = String(end);
    return result;
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: 'file:///{+path}',
        name: 'file',
        description: 'Any regular file under the served directory, by its relative path',
      },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const uri = request.params.uri;
    const file = index.byUri.get(uri) ?? resolve(root, uri);
    const notFound = () =>
      new McpError(ErrorCode.InvalidParams, `Resource ${uri} not found`, { uri });
    if (!file) throw notFound();
    let bytes;
    try {
      bytes = await readFile(file.path);
    } catch {
      throw notFound();
    }
    const { mimeType } = file;
    if (mimeType.startsWith('text/')) {
      try {
        const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
        return { contents: [{ uri, mimeType, text }] };
      } catch {
        // Not UTF-8: sent as a blob below.
      }
    }
    return { contents: [{ uri, mimeType, blob: bytes.toString('base64') }] };
  });
  return server;
}

async function serveHttp(root, index, address) {
  const match = /^(.*):([0-9]+)$/.exec(address);
  if (!match) throw new Error(`--http ${address}: expected HOST:PORT`);
  const [, host, port] = match;
  const sessions = new Map();
  const http = createServer({ noDelay: true }, async (req, res) => {
    const url = req.url ?? '';
    if (url !== '/mcp' && !url.startsWith('/mcp?')) {
      res.writeHead(404).end();
      return;
    }
    try {
      const sessionId = req.headers['mcp-session-id'];
      let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
      if (!transport && sessionId === undefined && req.method === 'POST') {
        // Only an initialize opens a session: read the body to tell.
        const chunks = [];
        for await (const chunk of req) chunks.push(chunk);
        let body;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          body = undefined;
        }
        if (body !== undefined && isInitializeRequest(body)) {
          transport = new StreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            onsessioninitialized: (id) => sessions.set(id, transport),
          });
          transport.onclose = () => {
            if (transport.sessionId) sessions.delete(transport.sessionId);
          };
          await makeServer(root, index).connect(transport);
        }
        if (!transport) {
          res.writeHead(400, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              jsonrpc: '2.0',
              error: { code: ErrorCode.InvalidRequest, message: 'No session: send initialize first' },
              id: null,
            }),
          );
          return;
        }
        await transport.handleRequest(req, res, body);
        return;
      }
      if (!transport) {
        // No session ID is a bad request; an unknown (or ended) one is not found.
        const missing = sessionId === undefined;
        res.writeHead(missing ? 400 : 404, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            error: {
              code: ErrorCode.InvalidRequest,
              message: missing ? 'Mcp-Session-Id header required' : 'Session not found',
            },
            id: null,
          }),
        );
        return;
      }
      await transport.handleRequest(req, res);
    } catch (error) {
      process.stderr.write(`mcp-bench-typescript: ${error?.stack ?? error}\n`);
      if (!res.headersSent) res.writeHead(500).end();
    }
  });
  await new Promise((ok, fail) => {
    http.once('error', fail);
    http.listen(Number(port), host, ok);
  });
  process.stderr.write(`mcp-bench-typescript: listening on http://${address}/mcp\n`);
  const stop = () => {
    for (const transport of sessions.values()) transport.close().catch(() => {});
    http.close();
    http.closeAllConnections();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

async function main() {
  const args = process.argv.slice(2);
  let rootArg;
  let http;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--http') http = args[++i];
    else if (rootArg === undefined) rootArg = args[i];
    else rootArg = null;
  }
  if (!rootArg || (args.includes('--http') && !http)) {
    process.stderr.write('usage: server.mjs ROOT [--http 127.0.0.1:PORT]\n');
    process.exit(2);
  }
  const root = realpathSync(rootArg);
  const index = buildIndex(root);
  if (http) {
    await serveHttp(root, index, http);
  } else {
    // Node exits by itself once stdin has ended and the replies in flight are written.
    await makeServer(root, index).connect(new StdioServerTransport());
  }
}

main().catch((error) => {
  process.stderr.write(`mcp-bench-typescript: ${error?.stack ?? error}\n`);
  process.exit(1);
});
