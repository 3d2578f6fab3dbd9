// Shared setup for the browser tests: the Go server under test, a static
// server for the page when the bot does not serve it, and headless Debian
// Chromium driven by playwright-core with the flags of smallwebrtc.md §6.4.
import { spawn, execFileSync } from "node:child_process";
import { createInterface } from "node:readline";
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { connect as tcpConnect, createServer as createTCPServer } from "node:net";
import { fileURLToPath } from "node:url";
import { dirname, join, normalize } from "node:path";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
export const e2eDir = join(here, "..");
export const repo = join(e2eDir, "..");

export const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
export const CONNECT_TIMEOUT = 20000;
const TAGS = process.env.TAGS ?? "opus nolibopusfile";

// goBuild builds a Go main package of the repository into dist/.
export function goBuild(pkg, name) {
  const bin = join(e2eDir, "dist", name);
  execFileSync("go", ["build", "-tags", TAGS, "-o", bin, pkg], { cwd: repo, stdio: "inherit" });
  return bin;
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = createTCPServer();
    s.listen(0, "127.0.0.1", () => { const { port } = s.address(); s.close(() => resolve(port)); });
    s.on("error", reject);
  });
}

async function waitForPort(port, timeout) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const ok = await new Promise((resolve) => {
      const sock = tcpConnect(port, "127.0.0.1", () => { sock.end(); resolve(true); });
      sock.on("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on port ${port} after ${timeout} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

// Server runs a Go server and records the JSON event lines it prints
// (the e2e server prints them; other bots need not).
export class Server {
  constructor({ cmd, args = [], addrFlag = null }) {
    this.cmd = cmd;
    this.args = args;
    this.addrFlag = addrFlag; // e.g. "-addr": the harness picks the port
    this.events = [];
    this.waiters = [];
  }

  async start() {
    const args = [...this.args];
    let port = null;
    if (this.addrFlag) {
      port = await freePort();
      args.push(this.addrFlag, `127.0.0.1:${port}`);
    }
    this.proc = spawn(this.cmd, args, { cwd: repo, stdio: ["ignore", "pipe", "pipe"] });
    this.proc.stderr.on("data", (d) => { if (process.env.E2E_VERBOSE) process.stderr.write(d); });
    const exited = new Promise((_, reject) => this.proc.once("exit", (code) => reject(new Error(`${this.cmd} exited with ${code}`))));
    exited.catch(() => {});
    const lines = createInterface({ input: this.proc.stdout });
    const announced = new Promise((resolve) => {
      lines.on("line", (line) => {
        if (process.env.E2E_VERBOSE) console.log("[server]", line);
        const m = line.match(/listening on (http:\/\/\S+)/);
        if (m) { resolve(m[1]); return; }
        try { this.record(JSON.parse(line)); } catch { /* not an event */ }
      });
    });
    const ready = port ? waitForPort(port, 90000).then(() => `http://127.0.0.1:${port}`) : announced;
    this.url = await Promise.race([ready, exited]);
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

// servePage serves index.html and dist/ on another port, for bots that do
// not serve the page: the page is then cross-origin and CORS is exercised.
export async function servePage() {
  const server = createServer(async (req, res) => {
    const path = normalize(new URL(req.url, "http://x").pathname).replace(/^\/+/, "") || "index.html";
    if (!/^(index\.html|dist\/[\w.-]+\.js)$/.test(path)) { res.writeHead(404).end(); return; }
    try {
      const body = await readFile(join(e2eDir, path));
      res.writeHead(200, { "Content-Type": path.endsWith(".js") ? "text/javascript" : "text/html" }).end(body);
    } catch { res.writeHead(404).end(); }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
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

// Target is where a test connects: the page's URL and the bot's origin.
export class Target {
  constructor(browser, pageURL, botURL) {
    this.browser = browser;
    this.pageURL = pageURL;
    this.botURL = botURL;
  }

  // open opens the test page (legacy: client-js 1.9 + transport 1.10.2).
  async open({ legacy = false } = {}) {
    const context = await this.browser.newContext();
    const page = await context.newPage();
    page.on("console", (m) => { if (process.env.E2E_VERBOSE) console.log("[page]", m.type(), m.text()); });
    await page.goto(this.pageURL + "/" + (legacy ? "?legacy" : ""));
    await page.waitForFunction(() => typeof window.connect === "function");
    return page;
  }

  // connect runs client.connect() (or startBotAndConnect) in the page,
  // bounded: connect() itself never times out (smallwebrtc.md §5, trap 16).
  async connect(page, opts = {}) {
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
    }, { opts: { ...opts, base: this.botURL }, timeout: CONNECT_TIMEOUT });
  }
}

// until waits until fn(arg), evaluated in the page, is truthy, and fails
// after timeout ms. fn may be async: it is polled from here every 50 ms,
// because playwright's waitForFunction takes the promise an async function
// returns for a truthy answer instead of waiting for it.
export async function until(page, fn, arg, timeout = 10000) {
  const deadline = Date.now() + timeout;
  for (;;) {
    if (await page.evaluate(fn, arg)) return;
    if (Date.now() >= deadline) throw new Error(`until: not true after ${timeout} ms: ${fn}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function closePage(page) {
  try { await page.evaluate(() => window.__client && window.__client.disconnect()); } catch { /* gone */ }
  await page.context().close();
}
