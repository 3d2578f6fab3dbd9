// Shared setup of the ui-agent browser tests: build and start the Go
// server, launch Debian Chromium with the flags of smallwebrtc.md §6.4.
import { spawn, execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { mkdirSync, mkdtempSync, createWriteStream, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const example = resolve(here, "..");
export const repo = resolve(example, "../..");
const require = createRequire(join(example, "web", "package.json"));
export const { chromium } = require("playwright-core");

export const outDir = resolve(process.env.E2E_OUT_DIR || join(example, "out", "e2e"));
export const browserPath = process.env.CHROMIUM || "/usr/bin/chromium";
export const WAIT = 15000;

let binary;

// buildServer builds the demo once per test process, with the page
// embedded. TAGS (as in the Makefile and e2e/) or GO_TAGS set build tags.
export function buildServer() {
  if (binary) return binary;
  mkdirSync(outDir, { recursive: true });
  if (!existsSync(join(example, "web", "dist", "app.js"))) {
    throw new Error("the page bundle is missing: run examples/ui-agent/build.sh first");
  }
  const bin = join(mkdtempSync(join(tmpdir(), "ui-agent-e2e-")), "ui-agent");
  const tagList = process.env.GO_TAGS ?? process.env.TAGS ?? "";
  const tags = tagList.trim() ? ["-tags", tagList] : [];
  execFileSync("go", ["build", ...tags, "-o", bin, "./examples/ui-agent"], { cwd: repo, stdio: "inherit" });
  binary = bin;
  return bin;
}

// startServer starts the demo on a free port with env added to the
// environment (the demo brain is forced), logging to out/<log>. It
// resolves to {url, stop}.
export async function startServer(env, log) {
  const bin = buildServer();
  const logFile = createWriteStream(join(outDir, log));
  const server = spawn(bin, ["-addr", "127.0.0.1:0", "-v"], {
    env: { ...process.env, FRAMEWIRE_BRAIN: "demo", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise((res) => server.once("exit", (code, signal) => res({ code, signal })));
  server.stdout.pipe(logFile);
  const url = await new Promise((res, rej) => {
    let buf = "";
    const timer = setTimeout(() => rej(new Error(`the server did not start:\n${buf}`)), 60000);
    server.stderr.on("data", (d) => {
      logFile.write(d);
      buf += d;
      const m = buf.match(/open (http:\/\/127\.0\.0\.1:\d+\/)/);
      if (m) {
        clearTimeout(timer);
        res(m[1]);
      }
    });
    server.once("exit", (code) => rej(new Error(`the server exited (${code}):\n${buf}`)));
  });
  const stop = async () => {
    if (server.exitCode !== null) return;
    server.kill("SIGINT");
    const killer = setTimeout(() => server.kill("SIGKILL"), 15000);
    await exited;
    clearTimeout(killer);
  };
  return { url, stop };
}

// launchBrowser starts headless Chromium; extra flags are appended.
export function launchBrowser(extra = []) {
  if (!existsSync(browserPath)) {
    throw new Error(`no Chromium at ${browserPath}: install Debian's chromium (apt-get install chromium) or set CHROMIUM`);
  }
  return chromium.launch({
    executablePath: browserPath,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--use-fake-ui-for-media-stream",
      "--use-fake-device-for-media-stream",
      "--autoplay-policy=no-user-gesture-required",
      "--disable-features=WebRtcHideLocalIpsWithMdns",
      ...extra,
    ],
  });
}
