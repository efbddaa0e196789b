#!/usr/bin/env node
// The `rsrc` command of the npm package `rsrc`: finds the binary of this platform's
// package (an optional dependency, installed by npm only where its os, cpu and libc
// match) and runs it with this process's arguments, standard streams and signals, then
// exits as it exited.
//
// Invariants: it never downloads anything; a platform without a package, or whose package
// is missing, gets one error naming the platform and the package, and exit status 1.

"use strict";

const { spawn } = require("node:child_process");
const path = require("node:path");

// { "linux x64 glibc": "@rsrc/cli-linux-x64-gnu", ... }, written by scripts/dist from
// packaging/targets.tsv.
const platforms = require("./platforms.json");

function libc() {
  if (process.platform !== "linux") return "-";
  const report = process.report && process.report.getReport();
  const header = report && (report.header || report);
  return header && header.glibcVersionRuntime ? "glibc" : "musl";
}

function fail(message) {
  process.stderr.write(`rsrc: ${message}\n`);
  process.exit(1);
}

const platform = `${process.platform} ${process.arch} ${libc()}`;
const pkg = platforms[platform];
if (!pkg) {
  const known = Object.keys(platforms).join(", ");
  fail(`no rsrc binary is built for this platform (${platform}); packages exist for: ${known}. ` +
    "Build it from source with `cargo install --git https://github.com/rsrc-dev/rsrc rsrc-cli`.");
}
let binary;
try {
  const dir = path.dirname(require.resolve(`${pkg}/package.json`));
  binary = path.join(dir, "bin", process.platform === "win32" ? "rsrc.exe" : "rsrc");
} catch {
  fail(`the package ${pkg}, which holds the binary for this platform (${platform}), is not ` +
    "installed. It is an optional dependency of rsrc: reinstall without --omit=optional " +
    "(or --no-optional), or install it yourself.");
}

const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });
// A signal to this process (a host stopping its server) is the binary's too.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (e) => fail(`cannot run ${binary}: ${e.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code);
  }
});
