// Processes of the cluster browser test (test/cluster.test.mjs): Debian's
// nats-server, and the examples/cluster front door and workers, each its
// own child process. Every child is tracked from spawn on and killed when
// the test stops it, or with SIGKILL when the test process exits, so that
// a failing test leaves no orphans.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { repo } from "./harness.mjs";

export const NATS_SERVER = process.env.NATS_SERVER || "/usr/sbin/nats-server";

// haveNATSServer reports whether the nats-server binary is there.
export const haveNATSServer = () => existsSync(NATS_SERVER);

const live = new Set();
function killAll() {
  for (const p of live) {
    try { p.kill("SIGKILL"); } catch { /* gone */ }
  }
}
process.once("exit", killAll);
// A signal (the test runner's timeout, Ctrl-C) skips the exit handlers:
// kill the children, then die of the same signal.
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.once(sig, () => {
    killAll();
    process.kill(process.pid, sig);
  });
}

// MAX_LINES bounds the output kept per process (for waiting on a line and
// for the diagnostics of a failure).
const MAX_LINES = 5000;

// Proc is one child process whose stdout and stderr lines are kept (the
// last MAX_LINES), so a test can wait for a line or show the tail.
export class Proc {
  constructor(name, cmd, args) {
    this.name = name;
    this.cmd = cmd;
    this.args = args;
    this.lines = [];
    this.waiters = [];
    this.exitStatus = null;
  }

  start() {
    this.proc = spawn(this.cmd, this.args, { cwd: repo, stdio: ["ignore", "pipe", "pipe"] });
    live.add(this.proc);
    this.exited = new Promise((resolve) => {
      this.proc.once("exit", (code, signal) => {
        live.delete(this.proc);
        this.exitStatus = signal ? `signal ${signal}` : `exit ${code}`;
        for (const w of this.waiters) w.fail(new Error(`${this.name} ended (${this.exitStatus}) before printing ${w.re}`));
        this.waiters = [];
        resolve(this.exitStatus);
      });
    });
    this.proc.once("error", (e) => this.record(`spawn error: ${e.message}`));
    for (const stream of [this.proc.stdout, this.proc.stderr]) {
      createInterface({ input: stream }).on("line", (line) => this.record(line));
    }
    return this;
  }

  get pid() { return this.proc.pid; }
  get running() { return this.proc && this.exitStatus === null; }

  record(line) {
    if (process.env.E2E_VERBOSE) console.log(`[${this.name}]`, line);
    this.lines.push(line);
    if (this.lines.length > MAX_LINES) this.lines.splice(0, this.lines.length - MAX_LINES);
    this.waiters = this.waiters.filter((w) => {
      const m = line.match(w.re);
      if (m) w.resolve(m);
      return !m;
    });
  }

  // waitForLine resolves with the match of the first line (past or
  // future) that matches re, and fails after timeout ms or when the
  // process ends first.
  waitForLine(re, timeout) {
    for (const line of this.lines) {
      const m = line.match(re);
      if (m) return Promise.resolve(m);
    }
    if (!this.running) return Promise.reject(new Error(`${this.name} is not running (${this.exitStatus})`));
    return new Promise((resolve, reject) => {
      const w = { re };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        reject(new Error(`${this.name} printed no line matching ${re} within ${timeout} ms; its last lines:\n${this.tail()}`));
      }, timeout);
      w.resolve = (m) => { clearTimeout(timer); resolve(m); };
      w.fail = (e) => { clearTimeout(timer); reject(e); };
      this.waiters.push(w);
    });
  }

  tail(n = 20) { return this.lines.slice(-n).map((l) => `  ${this.name}| ${l}`).join("\n"); }

  // kill sends signal and waits (at most timeout ms) for the exit.
  async kill(signal = "SIGKILL", timeout = 5000) {
    if (!this.running) return this.exitStatus;
    this.proc.kill(signal);
    return bounded(this.exited, timeout, `${this.name} to exit after ${signal}`);
  }

  // stop asks the process to end with SIGTERM, and kills it after grace ms.
  async stop(grace = 5000) {
    if (!this.running) return this.exitStatus;
    try {
      return await this.kill("SIGTERM", grace);
    } catch {
      return this.kill("SIGKILL");
    }
  }
}

// bounded is p, or a rejection after timeout ms.
export function bounded(p, timeout, what) {
  let timer;
  const guard = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`no ${what} within ${timeout} ms`)), timeout); });
  return Promise.race([p, guard]).finally(() => clearTimeout(timer));
}

// PORTS_PER_WORKER is the size of each worker's UDP media port range. The
// ranges do not overlap, so the port of a page's selected remote ICE
// candidate names the worker that carries its media.
const PORTS_PER_WORKER = 200;

// Cluster is a nats-server, one front door and n workers (ids w1…wn) of
// the examples/cluster binary bin, each its own process.
export class Cluster {
  constructor({ bin, workers = 3, capacity = 10 }) {
    this.bin = bin;
    this.n = workers;
    this.capacity = capacity;
    this.workers = new Map(); // id → {proc, portMin, portMax}
    this.procs = [];
  }

  async start() {
    // nats-server picks a free port itself (-p -1) and says which: no race
    // with another process taking a port picked here.
    this.nats = this.track(new Proc("nats-server", NATS_SERVER, ["-a", "127.0.0.1", "-p", "-1"]).start());
    const [, natsAddr] = await this.nats.waitForLine(/Listening for client connections on (127\.0\.0\.1:\d+)/, 15000);
    this.natsURL = `nats://${natsAddr}`;

    // Disjoint UDP ranges from a random base (ports not in the usual
    // ephemeral range of 32768-60999, so the kernel's own picks rarely
    // sit in them; pion moves on to the next port of the range if one is
    // taken).
    const base = 20000 + Math.floor(Math.random() * 40) * 250;
    for (let i = 1; i <= this.n; i++) {
      const id = `w${i}`;
      const portMin = base + (i - 1) * PORTS_PER_WORKER;
      const portMax = portMin + PORTS_PER_WORKER - 1;
      const proc = this.track(new Proc(id, this.bin, ["worker", "-nats", this.natsURL, "-id", id,
        "-capacity", String(this.capacity), "-loopback-only",
        "-port-min", String(portMin), "-port-max", String(portMax), "-grace", "2s"]).start());
      this.workers.set(id, { id, proc, portMin, portMax });
    }
    this.frontdoor = this.track(new Proc("frontdoor", this.bin, ["frontdoor", "-nats", this.natsURL, "-addr", "127.0.0.1:0",
      "-status-addr", "127.0.0.1:0"]).start());
    const [, url] = await this.frontdoor.waitForLine(/listening on (http:\/\/\S+)/, 30000);
    this.url = url;
    // /cluster is on the operators' listener, not the browsers' port.
    const [, statusURL] = await this.frontdoor.waitForLine(/status on (http:\/\/\S+)/, 30000);
    this.statusURL = statusURL;
    await this.waitForStatus((st) => st.workers.length === this.n && st.workers.every((w) => !w.draining), 30000,
      `the front door to see ${this.n} workers`);
    return this;
  }

  track(p) { this.procs.push(p); return p; }

  // workerOfPort names the worker whose media port range holds port.
  workerOfPort(port) {
    for (const w of this.workers.values()) if (port >= w.portMin && port <= w.portMax) return w.id;
    return null;
  }

  // status is the front door's GET /cluster.
  async status() {
    const res = await fetch(this.statusURL + "/cluster", { signal: AbortSignal.timeout(5000) });
    if (res.status !== 200) throw new Error(`GET /cluster: ${res.status}`);
    return res.json();
  }

  async healthz() {
    const res = await fetch(this.url + "/healthz", { signal: AbortSignal.timeout(5000) });
    return { status: res.status, body: await res.json() };
  }

  // waitForStatus polls /cluster until pred(status) holds and returns that
  // status; it fails after timeout ms with the last one seen.
  async waitForStatus(pred, timeout, what) {
    const deadline = Date.now() + timeout;
    let last = null;
    for (;;) {
      try {
        last = await this.status();
        if (pred(last)) return last;
      } catch (e) {
        last = String(e);
      }
      if (Date.now() >= deadline) {
        throw new Error(`no ${what} within ${timeout} ms; last /cluster: ${JSON.stringify(last)}\n${this.tails()}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  // sessionsByWorker maps each live worker's id to its sessions as the
  // front door sees them (heartbeats).
  static sessionsByWorker(st) {
    return Object.fromEntries(st.workers.map((w) => [w.id, w.sessions]));
  }

  tails(n = 15) { return this.procs.map((p) => p.tail(n)).join("\n"); }

  // stop ends every process: the front door and the workers with SIGTERM
  // (SIGKILL after a few seconds), then nats-server.
  async stop() {
    const rest = this.procs.filter((p) => p !== this.nats);
    await Promise.allSettled(rest.map((p) => p.stop(8000)));
    if (this.nats) await this.nats.stop(5000).catch(() => this.nats.kill("SIGKILL"));
  }
}
