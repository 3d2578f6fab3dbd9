// The real @pipecat-ai/client-js + @pipecat-ai/small-webrtc-transport in
// headless Chromium against framewire's Go server: the transport scenarios
// of shared/spec/conformance-bot.md that need no UI agent.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { Server, launchBrowser, openPage, connect, until, closePage } from "../lib/harness.mjs";

const server = new Server();
let browser;

before(async () => {
  await server.start();
  browser = await launchBrowser();
});

after(async () => {
  if (browser) await browser.close();
  await server.stop();
});

const httpEvent = (method, pathRe, status = 200) => (e) =>
  e.event === "http" && e.method === method && pathRe.test(e.path) && e.status === status;

describe("small-webrtc-transport 1.10 with client-js 1.13", () => {
  it("connects and completes the RTVI 2.1.0 handshake", async () => {
    const page = await openPage(browser, server);
    const data = await connect(page);
    assert.equal(data.version, "2.1.0");
    const log = await page.evaluate(() => window.__e2e.log);
    const states = log.filter((l) => l.startsWith("state ")).map((l) => l.slice(6));
    for (const s of ["connecting", "connected", "ready"]) assert.ok(states.includes(s), `state ${s} in ${states}`);
    assert.ok(states.indexOf("connected") < states.indexOf("ready"));
    const pcId = await page.evaluate(() => window.pcId());
    assert.ok(pcId, "the client stored a pc_id");
    await server.waitFor(httpEvent("POST", /^\/api\/offer$/), 5000, "POST /api/offer 200");
    await server.waitFor(httpEvent("PATCH", /^\/api\/offer$/), 5000, "a 200 PATCH with candidates");
    await server.waitFor((e) => e.event === "client-ready" && e.version === "2.1.0", 5000, "client-ready 2.1.0");
    await closePage(page);
  });

  it("follows the /start flow to the session offer path", async () => {
    const page = await openPage(browser, server);
    const data = await connect(page, { startFlow: true });
    assert.equal(data.version, "2.1.0");
    await server.waitFor(httpEvent("POST", /^\/start$/), 5000, "POST /start");
    await server.waitFor(httpEvent("POST", /^\/sessions\/[\w-]+\/api\/offer$/), 5000, "POST /sessions/<id>/api/offer");
    await server.waitFor(httpEvent("PATCH", /^\/sessions\/[\w-]+\/api\/offer$/), 5000, "PATCH on the session path");
    await closePage(page);
  });

  it("echoes a client request with non-ASCII data intact", async () => {
    const page = await openPage(browser, server);
    await connect(page);
    const got = await page.evaluate(() => window.__client.sendClientRequest("echo", { x: 1, s: "héllo" }));
    assert.deepEqual(got, { x: 1, s: "héllo" });
    await closePage(page);
  });

  it("survives bad input on the raw data channel", async () => {
    const page = await openPage(browser, server);
    await connect(page);
    await page.evaluate(() => {
      window.sendRaw("{this is not json");
      window.sendRaw(JSON.stringify({ label: "rtvi-ai", type: "frobnicate", id: "hfrob001" }));
    });
    await until(page, () => window.__e2e.raw.some((m) => m.includes("hfrob001")));
    const reply = await page.evaluate(() => JSON.parse(window.__e2e.raw.find((m) => m.includes("hfrob001"))));
    assert.equal(reply.type, "error-response");
    assert.equal(reply.data.error, "Unsupported type frobnicate");
    const got = await page.evaluate(() => window.__client.sendClientRequest("echo", "still here"));
    assert.equal(got, "still here");
    assert.equal(await page.evaluate(() => window.__client.state), "ready");
    await closePage(page);
  });

  it("plays the bot's audio on mid 0 and fires onTrackStarted", async () => {
    const page = await openPage(browser, server);
    await connect(page);
    await until(page, () => window.__e2e.trackStarted.includes("audio"), undefined, 5000);
    await until(page, async () => { const s = await window.inboundAudio(); return s && s.packets > 50; }, undefined, 5000);
    const stats = await page.evaluate(() => window.inboundAudio());
    assert.equal(stats.mid, "0");
    assert.match(stats.mimeType, /^audio\/(opus|PCMU)$/i);
    await closePage(page);
  });

  it("sends the fake microphone up as 16 kHz mono 20 ms frames", async () => {
    const page = await openPage(browser, server);
    await connect(page, { mic: true });
    const ev = await server.waitFor((e) => e.event === "input-audio", 10000, "a second of input audio");
    assert.equal(ev.rate, 16000);
    assert.equal(ev.channels, 1);
    assert.equal(ev.bytes, 640);
    await closePage(page);
  });

  it("answers disconnect-bot with peerLeft and ends the session", async () => {
    const page = await openPage(browser, server);
    await connect(page);
    const pcId = await page.evaluate(() => window.pcId());
    const t0 = Date.now();
    await page.evaluate(() => window.__client.disconnectBot());
    await until(page, () => window.__e2e.botDisconnected, undefined, 3000);
    assert.ok(Date.now() - t0 < 3000);
    await server.waitFor((e) => e.event === "session-ended" && /pipeline ended/.test(e.reason), 5000, "the session to end");
    assert.ok(pcId);
    await closePage(page);
  });

  it("ends the session when the client disconnects", async () => {
    const page = await openPage(browser, server);
    await connect(page);
    const before = server.events.filter((e) => e.event === "session-ended").length;
    await page.evaluate(() => window.__client.disconnect());
    await server.waitFor(() => server.events.filter((e) => e.event === "session-ended").length > before, 5000,
      "the server to notice the disconnect");
    await page.context().close();
  });

  it("serves a reconnect and two clients at once as independent sessions", async () => {
    const first = await openPage(browser, server);
    await connect(first);
    const firstId = await first.evaluate(() => window.pcId());
    await first.evaluate(() => window.__client.disconnect());
    const [a, b] = await Promise.all([openPage(browser, server), openPage(browser, server)]);
    await Promise.all([connect(a), connect(b)]);
    const ids = await Promise.all([a, b].map((p) => p.evaluate(() => window.pcId())));
    assert.notEqual(ids[0], ids[1]);
    assert.ok(!ids.includes(firstId));
    const echoes = await Promise.all([a, b].map((p, i) => p.evaluate((i) => window.__client.sendClientRequest("echo", { i }), i)));
    assert.deepEqual(echoes, [{ i: 0 }, { i: 1 }]);
    await Promise.all([first, a, b].map(closePage));
  });
});

describe("small-webrtc-transport 1.10.2 with client-js 1.9 (RTVI 1.3.0)", () => {
  it("completes the 1.3.0 handshake with the version echoed", async () => {
    const page = await openPage(browser, server, { legacy: true });
    const data = await connect(page);
    assert.equal(data.version, "1.3.0");
    await server.waitFor((e) => e.event === "client-ready" && e.version === "1.3.0", 5000, "client-ready 1.3.0");
    const got = await page.evaluate(() => window.__client.sendClientRequest("echo", { legacy: true }));
    assert.deepEqual(got, { legacy: true });
    await closePage(page);
  });
});
