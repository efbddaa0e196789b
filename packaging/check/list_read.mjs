// Installed-package check with the official TypeScript SDK (npm @modelcontextprotocol/sdk):
// launch a server over stdio, list its resources, read one, and compare its text.
//
//   node list_read.mjs --uri URI --text TEXT [--cwd DIR] -- COMMAND [ARG]...
//
// Exits 0 when URI is listed and reads as TEXT, 1 otherwise (saying why).

import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const TIMEOUT_MS = 60_000;
const { values: args, positionals } = parseArgs({
  options: { uri: { type: "string" }, text: { type: "string" }, cwd: { type: "string" } },
  allowPositionals: true,
});
const [command, ...rest] = positionals;
const what = `typescript: ${positionals.join(" ")}`;
setTimeout(() => {
  console.error(`${what}: no answer within ${TIMEOUT_MS} ms`);
  process.exit(1);
}, TIMEOUT_MS).unref();

try {
  const client = new Client({ name: "rsrc-package-check", version: "0" });
  await client.connect(
    new StdioClientTransport({ command, args: rest, cwd: args.cwd, stderr: "inherit" }),
  );
  const listed = await client.listResources();
  const uris = listed.resources.map((r) => r.uri);
  if (!uris.includes(args.uri)) throw new Error(`${args.uri} is not listed: ${uris}`);
  const read = await client.readResource({ uri: args.uri });
  const got = read.contents[0]?.text;
  if (got !== args.text) throw new Error(`${args.uri} reads ${JSON.stringify(got)}, not ${JSON.stringify(args.text)}`);
  console.log(`${what}: listed and read ${args.uri}`);
  await client.close();
  process.exit(0);
} catch (e) {
  console.error(`${what}: ${e.message ?? e}`);
  process.exit(1);
}
