// Issue 20's acceptance test: Debian's nats-server, one examples/cluster
// front door and three workers, each its own process, driven by the real
// client-js 1.13 with small-webrtc-transport 1.10.8 in Chromium through
// the front door's URL only. Sessions spread over the workers (the
// conformance bot runs on each); handshake, echo, a UI command, the /start
// flow, a reconnect and an ICE restart work through the front door; then
// one worker that owns sessions is killed with SIGKILL: its clients see
// their peer connection drop, the other sessions keep their audio and
// echo, the front door forgets the dead worker, and new sessions succeed.
//
// The dead worker's /api/offer clients come back by themselves (the
// transport's restart_pc offer becomes a new session on a live worker);
// its /start flow client reads the front door's 404 for the session path
// and stops.
//
// Which worker carries a page's media is read from the page itself: each
// worker has its own UDP port range (-port-min/-port-max), and the port
// of the selected remote ICE candidate names it.
import { describe, it, before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { goBuild, launchBrowser, servePage, Target, until, closePage } from "../lib/harness.mjs";
import { Cluster, NATS_SERVER, haveNATSServer, bounded } from "../lib/cluster.mjs";

const skip = haveNATSServer() ? false
  : `${NATS_SERVER} is missing: run 'sudo apt-get install -y nats-server' (e2e/setup.sh does as root) or set NATS_SERVER`;

const WORKERS = 3;
// CAPACITY 5 per worker: six sessions cannot all land on one worker, and
// the two survivors of a kill have room for the dead worker's sessions
// coming back plus two new ones (seven sessions are live then).
const CAPACITY = 5;
const opus = process.env.TAGS !== "";

// In the page: the port of the selected remote ICE candidate of the
// transport's current peer connection (the worker's media port), or null.
const remotePort = async () => {
  const pc = window.__transport && window.__transport.pc;
  if (!pc) return null;
  const stats = await pc.getStats();
  let pair = null;
  stats.forEach((s) => { if (s.type === "transport" && s.selectedCandidatePairId) pair = stats.get(s.selectedCandidatePairId); });
  const rc = pair && stats.get(pair.remoteCandidateId);
  return rc ? rc.port : null;
};

// In the page: the inbound audio of the current peer connection.
const inbound = async () => {
  const pc = window.__transport && window.__transport.pc;
  if (!pc) return null;
  const stats = await pc.getStats();
  let out = null;
  stats.forEach((s) => {
    if (s.type === "inbound-rtp" && s.kind === "audio") {
      const codec = s.codecId && stats.get(s.codecId);
      out = { mimeType: codec && codec.mimeType, packets: s.packetsReceived, bytes: s.bytesReceived,
        samplesDuration: s.totalSamplesDuration, energy: s.totalAudioEnergy, concealed: s.concealedSamples, samples: s.totalSamplesReceived };
    }
  });
  return out;
};

// In the page: record the state changes of the current peer connection
// (ICE and overall) with their times, in window.__watch.
const watchPC = () => {
  const pc = window.__transport.pc;
  const w = { pcId: window.__transport.pc_id, changes: [] };
  const note = (what) => w.changes.push({ at: Date.now(), what });
  pc.addEventListener("iceconnectionstatechange", () => note("ice " + pc.iceConnectionState));
  pc.addEventListener("connectionstatechange", () => note("pc " + pc.connectionState));
  // When the transport replaces the peer connection (its ICE restart) and
  // the new one is up.
  const poll = setInterval(() => {
    const t = window.__transport;
    if (t.pc && t.pc !== pc && t.pc.connectionState === "connected" && t.dc && t.dc.readyState === "open") {
      w.replacedAt = Date.now();
      clearInterval(poll);
    }
  }, 50);
  setTimeout(() => clearInterval(poll), 120000);
  window.__watch = w;
};

// echo sends a client-message echo and waits (bounded) for its answer.
async function echo(page, data, timeout = 10000) {
  return page.evaluate(({ data, timeout }) => Promise.race([
    window.__client.sendClientRequest("echo", data).catch((e) => {
      throw new Error(`echo refused: ${e && (e.message || e.type || JSON.stringify(e))}; client ${window.__client.state}, ` +
        `peer connection ${window.__transport.pc && window.__transport.pc.connectionState}; log ${JSON.stringify(window.__e2e.log.slice(-8))}`);
    }),
    new Promise((_, reject) => setTimeout(() => reject(new Error(`no echo answer in ${timeout} ms`)), timeout)),
  ]), { data, timeout });
}

// uiCommand sends the conformance bot's ui-command client-message and
// returns the ui-command the bot sends back on the data channel.
async function uiCommand(page, command, payload) {
  await page.evaluate(([command, payload]) => window.__client.sendClientMessage("ui-command", { command, payload }), [command, payload]);
  const h = await page.waitForFunction((command) => {
    for (const r of window.__e2e.raw) {
      try {
        const m = JSON.parse(r);
        if (m.type === "ui-command" && m.data && m.data.command === command) return m;
      } catch { /* not JSON */ }
    }
    return null;
  }, command, { timeout: 10000 });
  return h.jsonValue();
}

// audioFlows waits until the page's inbound audio grew by more than min
// packets and returns the stats.
async function audioFlows(page, min, timeout) {
  const first = await page.evaluate(inbound);
  const from = first ? first.packets : 0;
  await until(page, async ({ fn, from, min }) => {
    const s = await eval(fn)();
    return s && s.packets - from > min;
  }, { fn: inbound.toString(), from, min }, timeout);
  return page.evaluate(inbound);
}

describe("examples/cluster: nats-server, a front door and three workers as processes, with client-js in Chromium", { skip }, () => {
  let cluster, browser, pageServer, target;
  // Every page that is connected: {page, name, worker, startFlow}.
  const sessions = [];
  const t0 = Date.now();

  // open opens the test page and records the answers to its signalling
  // requests through the front door, in page.__signalling: {method, path,
  // status, at}.
  async function open() {
    const page = await target.open();
    page.__signalling = [];
    page.on("response", (r) => {
      if (!r.url().startsWith(cluster.url + "/")) return;
      page.__signalling.push({ method: r.request().method(), path: new URL(r.url()).pathname, status: r.status(), at: Date.now() });
    });
    return page;
  }

  // connect is target.connect, and on failure says what the page and the
  // processes logged last.
  async function connect(page, opts) {
    try {
      return await target.connect(page, opts);
    } catch (e) {
      const log = await page.evaluate(() => window.__e2e.log.slice(-15)).catch(() => []);
      throw new Error(`${e.message}\nthe page's log: ${JSON.stringify(log)}\nits signalling: ${JSON.stringify(page.__signalling)}\n${cluster.tails()}`);
    }
  }

  // answered waits until the page saw an answer to method path (a RegExp)
  // with status, after since (ms since the epoch).
  async function answered(page, method, path, status, since = 0, timeout = 10000) {
    const deadline = Date.now() + timeout;
    const hit = () => page.__signalling.find((r) => r.method === method && path.test(r.path) && r.at >= since && r.status === status);
    while (!hit()) {
      if (Date.now() >= deadline) {
        throw new Error(`no ${status} to ${method} ${path} within ${timeout} ms; the page's signalling: ${JSON.stringify(page.__signalling)}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    return hit();
  }

  // workerOf names the worker that carries the page's media now.
  async function workerOf(page) {
    await until(page, async (fn) => (await eval(fn)()) !== null, remotePort.toString(), 5000);
    const port = await page.evaluate(remotePort);
    const id = cluster.workerOfPort(port);
    assert.ok(id, `the remote media port ${port} is in no worker's range`);
    return id;
  }

  // countBy counts the sessions per worker.
  const countBy = (list) => {
    const out = {};
    for (const s of list) out[s.worker] = (out[s.worker] || 0) + 1;
    return out;
  };

  // matches reports whether the front door's per-worker sessions are the
  // ones the pages show.
  const matches = (st, want) => st.workers.every((w) => w.sessions === (want[w.id] || 0)) &&
    Object.keys(want).every((id) => st.workers.some((w) => w.id === id));

  before(async () => {
    const bin = goBuild("./examples/cluster", "cluster");
    const built = Date.now();
    cluster = new Cluster({ bin, workers: WORKERS, capacity: CAPACITY });
    try {
      await cluster.start();
    } catch (e) {
      throw new Error(`${e.message}\n${cluster.tails()}`);
    }
    pageServer = await servePage();
    browser = await launchBrowser();
    target = new Target(browser, pageServer.url, cluster.url);
    console.log(`built in ${built - t0} ms, cluster up in ${Date.now() - built} ms: front door ${cluster.url}, ${cluster.natsURL}, ` +
      [...cluster.workers.values()].map((w) => `${w.id} pid ${w.proc.pid} udp ${w.portMin}-${w.portMax}`).join(", "));
  }, { timeout: 240000 });

  afterEach((t) => {
    if (t.passed === false && cluster) console.log(`after the failure of "${t.name}":\n${cluster.tails(25)}`);
  });

  after(async () => {
    if (browser) await browser.close().catch(() => {});
    if (pageServer) await pageServer.close();
    if (cluster) {
      await cluster.stop();
      const left = cluster.procs.filter((p) => p.running).map((p) => `${p.name} (pid ${p.pid})`);
      assert.deepEqual(left, [], "every child process ended");
    }
    console.log(`cluster test done in ${Date.now() - t0} ms`);
  }, { timeout: 60000 });

  it("the front door sees the three workers and is healthy", async () => {
    const st = await cluster.status();
    assert.deepEqual(st.workers.map((w) => w.id), ["w1", "w2", "w3"]);
    assert.equal(st.connected, true);
    assert.equal(st.capacity, WORKERS * CAPACITY);
    assert.equal(st.sessions, 0);
    const h = await cluster.healthz();
    assert.equal(h.status, 200, JSON.stringify(h.body));
  });

  it("six sessions through the front door: handshake, echo, a ui-command and bot audio on each, spread over the workers", { timeout: 90000 }, async () => {
    const pages = await Promise.all(Array.from({ length: 6 }, () => open()));
    // One after another: six offers at once on a busy two-core machine
    // can take past the 20 s bound of one connect.
    const ready = [];
    for (const p of pages) ready.push(await connect(p));
    for (const data of ready) {
      assert.equal(data.version, "2.1.0");
      assert.equal(data.about.library, "framewire");
    }
    await Promise.all(pages.map(async (page, i) => {
      const states = (await page.evaluate(() => window.__e2e.log)).filter((l) => l.startsWith("state ")).map((l) => l.slice(6));
      assert.ok(states.indexOf("connected") < states.indexOf("ready"), `states ${states}`);
      assert.deepEqual(await echo(page, { i, s: "héllo" }), { i, s: "héllo" });
      const m = await uiCommand(page, "toast", { title: "Saved", i });
      assert.equal(m.label, "rtvi-ai");
      assert.deepEqual(m.data, { command: "toast", payload: { title: "Saved", i } });
      // The offer and the trickled candidates went through the front door.
      await answered(page, "POST", /^\/api\/offer$/, 200);
      await answered(page, "PATCH", /^\/api\/offer$/, 200);
      await until(page, () => window.__e2e.trackStarted.includes("audio"), undefined, 10000);
      const a = await audioFlows(page, 25, 15000);
      assert.match(a.mimeType, opus ? /^audio\/opus$/i : /^audio\/PCMU$/i);
      // Chromium decodes what arrives (the conformance bot's audio is
      // silence, so its energy is 0: what is checked is that it flows).
      assert.ok(a.samplesDuration > 0, JSON.stringify(a));
      if (i === 0) console.log("inbound audio of s1:", JSON.stringify(a));
      sessions.push({ page, name: `s${i + 1}`, worker: await workerOf(page), startFlow: false });
    }));
    const spread = countBy(sessions);
    console.log("six sessions per worker:", JSON.stringify(spread));
    assert.ok(Object.keys(spread).length >= 2, `the sessions spread over at least two workers: ${JSON.stringify(spread)}`);
    for (const n of Object.values(spread)) assert.ok(n <= CAPACITY, `no worker past its capacity: ${JSON.stringify(spread)}`);
    // The workers' heartbeats, as the front door reports them, agree with
    // where the pages' media goes.
    const st = await cluster.waitForStatus((st) => matches(st, spread), 10000, `/cluster sessions ${JSON.stringify(spread)}`);
    assert.equal(st.sessions, 6);
  });

  it("the /start flow through the front door", { timeout: 60000 }, async () => {
    assert.equal(sessions.length, 6, "needs the six sessions of the test before");
    const page = await open();
    const data = await connect(page, { startFlow: true });
    assert.equal(data.version, "2.1.0");
    await answered(page, "POST", /^\/start$/, 200);
    await answered(page, "POST", /^\/sessions\/[\w-]+\/api\/offer$/, 200);
    await answered(page, "PATCH", /^\/sessions\/[\w-]+\/api\/offer$/, 200);
    assert.deepEqual(await echo(page, "start flow"), "start flow");
    const m = await uiCommand(page, "navigate", { to: "/cart" });
    assert.deepEqual(m.data, { command: "navigate", payload: { to: "/cart" } });
    await audioFlows(page, 25, 15000);
    sessions.push({ page, name: "start", worker: await workerOf(page), startFlow: true });
    await cluster.waitForStatus((st) => matches(st, countBy(sessions)), 10000, `/cluster sessions ${JSON.stringify(countBy(sessions))}`);
  });

  it("reconnect: a client disconnects and connects again; an ICE restart (restart_pc) stays on its worker", { timeout: 60000 }, async () => {
    assert.equal(sessions.length, 7, "needs the sessions of the tests before");
    // Disconnect and connect again through the front door: a new session,
    // on whichever worker takes it.
    const s = sessions[0];
    const oldID = await s.page.evaluate(() => window.pcId());
    await s.page.evaluate(() => window.__client.disconnect());
    await until(s.page, () => window.__client.state === "disconnected", undefined, 5000);
    const data = await connect(s.page);
    assert.equal(data.version, "2.1.0");
    const newID = await s.page.evaluate(() => window.pcId());
    assert.ok(newID && newID !== oldID, `a new pc_id: ${oldID} then ${newID}`);
    assert.deepEqual(await echo(s.page, "again"), "again");
    s.worker = await workerOf(s.page);
    await audioFlows(s.page, 25, 15000);

    // The transport's own ICE restart (what it does 5 s into an ICE
    // outage): a new browser peer connection offered with restart_pc:true
    // and the old pc_id, which the front door must route to the worker
    // that owns the session.
    const r = sessions[1];
    const before = await r.page.evaluate(() => window.pcId());
    const restartAt = Date.now();
    await r.page.evaluate(() => { window.__oldPC = window.__transport.pc; window.__transport.attemptReconnection(true); });
    await until(r.page, () => window.__transport.pc !== window.__oldPC && window.__transport.pc.connectionState === "connected" &&
      window.__transport.dc.readyState === "open" && window.__oldPC.connectionState === "closed", undefined, 20000);
    const after = await r.page.evaluate(() => window.pcId());
    console.log(`ICE restart: pc_id ${before} then ${after}`);
    await answered(r.page, "POST", /^\/api\/offer$/, 200, restartAt);
    assert.deepEqual(await echo(r.page, "restarted"), "restarted");
    assert.equal(await workerOf(r.page), r.worker, "the restarted peer connection is on the session's worker");
    await audioFlows(r.page, 25, 15000);
    assert.equal(await r.page.evaluate(() => window.__client.state), "ready");
    // Still seven sessions, and where the pages say they are.
    await cluster.waitForStatus((st) => matches(st, countBy(sessions)), 10000, `/cluster sessions ${JSON.stringify(countBy(sessions))}`);
  });

  it("kill -9 of a worker: its clients see the disconnect, the others keep audio and echo, the front door drops it, new sessions succeed", { timeout: 90000 }, async () => {
    assert.equal(sessions.length, 7, "needs the sessions of the tests before");
    const spread = countBy(sessions);
    // The worker of the /start flow session dies when it has an /api/offer
    // session too (so both kinds of client are seen losing their worker),
    // else the worker with the most sessions. Six sessions are on two
    // workers at least, so another worker has sessions too.
    const startWorker = sessions.find((s) => s.startFlow).worker;
    const victim = spread[startWorker] >= 2 ? startWorker
      : Object.entries(spread).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0][0];
    const dead = sessions.filter((s) => s.worker === victim);
    const alive = sessions.filter((s) => s.worker !== victim);
    assert.ok(dead.length > 0 && alive.length > 0, JSON.stringify(spread));
    console.log(`killing ${victim} (pid ${cluster.workers.get(victim).proc.pid}) with ${dead.length} sessions; ${alive.length} on the others: ${JSON.stringify(spread)}`);
    await Promise.all(sessions.map((s) => s.page.evaluate(watchPC)));
    const before = await Promise.all(alive.map((s) => s.page.evaluate(inbound)));

    const killedAt = Date.now();
    assert.equal(await cluster.workers.get(victim).proc.kill("SIGKILL"), "signal SIGKILL");

    // The front door forgets the dead worker (three missed heartbeats)
    // and stays healthy: the other workers take sessions.
    const dropped = cluster.waitForStatus((st) => !st.workers.some((w) => w.id === victim), 10000, `the front door to drop ${victim}`)
      .then((st) => ({ st, ms: Date.now() - killedAt }));
    // Each client of the dead worker sees its peer connection drop.
    const disconnects = Promise.all(dead.map(async (s) => {
      await until(s.page, () => window.__watch.changes.some((c) => /^(ice|pc) (disconnected|failed)$/.test(c.what)), undefined, 20000);
      const w = await s.page.evaluate(() => window.__watch);
      return w.changes.find((c) => /^(ice|pc) (disconnected|failed)$/.test(c.what)).at - killedAt;
    }));
    const { st, ms } = await dropped;
    console.log(`the front door dropped ${victim} ${ms} ms after the kill: ${JSON.stringify(Cluster.sessionsByWorker(st))}`);
    assert.equal(st.workers.length, WORKERS - 1);
    assert.equal((await cluster.healthz()).status, 200);
    const seen = await disconnects;
    console.log(`the dead worker's clients saw their peer connection drop after ${seen.join(", ")} ms`);

    // Meanwhile the other sessions kept their peer connection, their audio
    // and their echo.
    await Promise.all(alive.map(async (s, i) => {
      const w = await s.page.evaluate(() => window.__watch);
      const drops = w.changes.filter((c) => /(disconnected|failed|closed)$/.test(c.what));
      assert.deepEqual(drops, [], `${s.name} on ${s.worker}: its peer connection stayed up`);
      const a = await s.page.evaluate(inbound);
      const secs = (Date.now() - killedAt) / 1000;
      // 50 packets a second; a third of them is plenty on a busy machine.
      assert.ok(a.packets - before[i].packets > 15 * secs, `${s.name}: ${a.packets - before[i].packets} packets in ${secs} s`);
      await audioFlows(s.page, 25, 10000);
      assert.deepEqual(await echo(s.page, { after: "kill", s: s.name }), { after: "kill", s: s.name });
      assert.equal(await workerOf(s.page), s.worker);
    }));

    // New sessions succeed, on the workers that are left.
    const fresh = await Promise.all([open(), open()]);
    for (const p of fresh) await connect(p);
    for (const [i, page] of fresh.entries()) {
      assert.deepEqual(await echo(page, { fresh: i }), { fresh: i });
      await audioFlows(page, 25, 15000);
      const worker = await workerOf(page);
      assert.notEqual(worker, victim);
      sessions.push({ page, name: `new${i + 1}`, worker, startFlow: false });
    }

    // The dead worker's clients: an /api/offer client's transport replaces
    // its peer connection 5 s into the outage (restart_pc with the dead
    // pc_id); the front door finds no owner and a live worker takes it as
    // a new session, as one process does with an unknown pc_id. A /start
    // flow client's restart goes to a session path nobody owns any more:
    // a 404, and the client disconnects for good.
    await Promise.all(dead.map(async (s) => {
      if (s.startFlow) {
        await until(s.page, () => window.__e2e.log.includes("disconnected"), undefined, 30000);
        // Its restart's offer: the front door knows no owner of the
        // session path any more.
        await answered(s.page, "POST", /^\/sessions\/[\w-]+\/api\/offer$/, 404, killedAt);
        assert.notEqual(await s.page.evaluate(() => window.__client.state), "ready");
        console.log(`${s.name}: the /start flow client got a 404 and disconnected (${await s.page.evaluate(() => window.__client.state)}), ` +
          `${Date.now() - killedAt} ms after the kill`);
        return;
      }
      await until(s.page, () => window.__transport.pc && window.__transport.pc_id !== window.__watch.pcId &&
        window.__transport.pc.connectionState === "connected" && window.__transport.dc.readyState === "open", undefined, 30000);
      await answered(s.page, "POST", /^\/api\/offer$/, 200, killedAt);
      assert.deepEqual(await echo(s.page, { back: s.name }), { back: s.name });
      const worker = await workerOf(s.page);
      assert.notEqual(worker, victim);
      console.log(`${s.name}: back on ${worker} ${(await s.page.evaluate(() => window.__watch.replacedAt)) - killedAt} ms after the kill`);
      s.worker = worker;
    }));
    const live = sessions.filter((s) => !(s.startFlow && s.worker === victim));
    await cluster.waitForStatus((st) => matches(st, countBy(live)), 10000, `/cluster sessions ${JSON.stringify(countBy(live))}`);
    await bounded(Promise.all(sessions.map((s) => closePage(s.page))), 20000, "the pages to close");
  });
});
