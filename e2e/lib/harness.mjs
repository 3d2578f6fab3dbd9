// Shared setup for the browser tests: the Go server (built from
// transports/webrtc/internal/e2eserver unless E2E_SERVER_CMD names another,
// such as examples/conformance), and headless Debian Chromium driven by
// playwright-core with the flags of smallwebrtc.md §6.4.
import { spawn, execFileSync } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
export const e2eDir = join(here, "..");
const repo = join(e2eDir, "..");

export const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
export const CONNECT_TIMEOUT = 20000;

// Server runs the Go server and records the JSON event lines it prints.
export class Server {
  constructor() {
    this.events = [];
    this.waiters = [];
  }

  async start() {
    let cmd, args;
    if (process.env.E2E_SERVER_CMD) {
      [cmd, ...args] = process.env.E2E_SERVER_CMD.split(" ");
    } else {
      const tags = process.env.TAGS ?? "opus nolibopusfile";
      const bin = join(e2eDir, "dist", "e2eserver");
      execFileSync("go", ["build", "-tags", tags, "-o", bin, "./transports/webrtc/internal/e2eserver"],
        { cwd: repo, stdio: "inherit" });
      cmd = bin;
      args = ["-addr", "127.0.0.1:0", "-static", e2eDir];
    }
    this.proc = spawn(cmd, args, { cwd: repo, stdio: ["ignore", "pipe", "pipe"] });
    this.proc.stderr.on("data", (d) => { if (process.env.E2E_VERBOSE) process.stderr.write(d); });
    const lines = createInterface({ input: this.proc.stdout });
    this.url = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the server did not start in 60 s")), 60000);
      this.proc.once("exit", (code) => reject(new Error(`the server exited with ${code}`)));
      lines.on("line", (line) => {
        const m = line.match(/listening on (http:\/\/\S+)/);
        if (m) { clearTimeout(timer); resolve(m[1]); return; }
        try { this.record(JSON.parse(line)); } catch { /* not an event */ }
      });
    });
  }

  record(ev) {
    this.events.push(ev);
    this.waiters = this.waiters.filter((w) => !(w.match(ev) && (w.resolve(ev), true)));
  }

  // waitFor resolves with the first event (past or future) that matches.
  waitFor(match, timeout = 10000, what = "event") {
    const seen = this.events.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${what} within ${timeout} ms`)), timeout);
      this.waiters.push({ match, resolve: (ev) => { clearTimeout(timer); resolve(ev); } });
    });
  }

  async stop() {
    if (!this.proc || this.proc.exitCode !== null) return;
    const exited = new Promise((r) => this.proc.once("exit", r));
    this.proc.kill("SIGTERM");
    await exited;
  }
}

export async function launchBrowser() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox", "--disable-gpu", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
      "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
      "--autoplay-policy=no-user-gesture-required",
      "--allow-loopback-in-peer-connection",
      "--disable-features=WebRtcHideLocalIpsWithMdns",
    ],
  });
}

// openPage opens the test page (legacy: client-js 1.9 + transport 1.10.2).
export async function openPage(browser, server, { legacy = false } = {}) {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.on("console", (m) => { if (process.env.E2E_VERBOSE) console.log("[page]", m.type(), m.text()); });
  await page.goto(server.url + "/" + (legacy ? "?legacy" : ""));
  await page.waitForFunction(() => typeof window.connect === "function");
  return page;
}

// connect runs client.connect() (or startBotAndConnect) in the page, bounded:
// connect() itself never times out (smallwebrtc.md §5, trap 16).
export async function connect(page, opts = {}) {
  return page.evaluate(async ({ opts, timeout }) => {
    let timer;
    const guard = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`connect() did not settle in ${timeout} ms`)), timeout);
    });
    try {
      return await Promise.race([window.connect(opts), guard]);
    } catch (e) {
      try { await window.__client.disconnect(); } catch { /* already down */ }
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }, { opts, timeout: CONNECT_TIMEOUT });
}

export async function until(page, fn, arg, timeout = 10000) {
  await page.waitForFunction(fn, arg, { timeout });
}

export async function closePage(page) {
  try { await page.evaluate(() => window.__client && window.__client.disconnect()); } catch { /* gone */ }
  await page.context().close();
}
