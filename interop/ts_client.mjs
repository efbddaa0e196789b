// Interop check with the official TypeScript SDK (npm @modelcontextprotocol/sdk):
// subscribe to one file served by `rsrc serve`, change the file, and expect
// `notifications/resources/updated` for it.
//
//   node ts_client.mjs --server 'stdio:RSRC serve DIR' | --server URL --file PATH --uri URI
//
// Exits 0 when the update arrives, 1 otherwise.

import { appendFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const TIMEOUT_MS = 10_000;
const { values: args } = parseArgs({
  options: { server: { type: "string" }, file: { type: "string" }, uri: { type: "string" } },
});

function transport(spec) {
  if (spec.startsWith("stdio:")) {
    const [command, ...rest] = spec.slice("stdio:".length).trim().split(/\s+/);
    return new StdioClientTransport({ command, args: rest, stderr: "inherit" });
  }
  return new StreamableHTTPClientTransport(new URL(spec));
}

const kind = args.server.startsWith("stdio:") ? "stdio" : "http";
const client = new Client({ name: "rsrc-interop-ts", version: "0" });
let received;
const updated = new Promise((resolve) => (received = resolve));
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
  if (n.params.uri === args.uri) received(true);
});
const timeout = new Promise((resolve) => setTimeout(() => resolve(false), TIMEOUT_MS));

try {
  await client.connect(transport(args.server));
  await client.subscribeResource({ uri: args.uri });
  appendFileSync(args.file, "changed by the interop test\n");
  const ok = await Promise.race([updated, timeout]);
  console.log(`typescript ${kind}: ${ok ? "received" : "did not receive"} notifications/resources/updated for ${args.uri}`);
  await client.close();
  process.exit(ok ? 0 : 1);
} catch (e) {
  console.error(`typescript ${kind}: failed: ${e}`);
  process.exit(1);
}
