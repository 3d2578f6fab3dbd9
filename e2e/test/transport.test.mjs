// The real @pipecat-ai/client-js + @pipecat-ai/small-webrtc-transport in
// headless Chromium against framewire's transport, served by the e2e
// server (cmd/e2eserver), which also serves the
// page. The conformance rows that need no UI agent, plus checks on what
// the server saw.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { Server, Target, goBuild, launchBrowser, servePage, e2eDir, closePage, until } from "../lib/harness.mjs";
import { conformanceScenarios } from "../lib/scenarios.mjs";

let server, browser, target;

before(async () => {
  const bin = goBuild("./cmd/e2eserver", "e2eserver");
  server = new Server({ cmd: bin, args: ["-addr", "127.0.0.1:0", "-static", e2eDir] });
  await server.start();
  browser = await launchBrowser();
  target = new Target(browser, server.url, server.url);
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.stop();
});

const httpEvent = (method, pathRe, status = 200) => (e) =>
  e.event === "http" && e.method === method && pathRe.test(e.path) && e.status === status;

describe("the e2e server as a conformance bot (no UI agent)", () => {
  conformanceScenarios(() => target);
});

describe("what the server saw", () => {
  it("the offer, trickled candidates, client-ready 2.1.0 and 1.3.0", async () => {
    await server.waitFor(httpEvent("POST", /^\/api\/offer$/), 5000, "POST /api/offer 200");
    await server.waitFor(httpEvent("PATCH", /^\/api\/offer$/), 5000, "a 200 PATCH with candidates");
    await server.waitFor(httpEvent("POST", /^\/start$/), 5000, "POST /start");
    await server.waitFor(httpEvent("POST", /^\/sessions\/[\w-]+\/api\/offer$/), 5000, "POST /sessions/<id>/api/offer");
    await server.waitFor(httpEvent("PATCH", /^\/sessions\/[\w-]+\/api\/offer$/), 5000, "PATCH on the session path");
    await server.waitFor((e) => e.event === "client-ready" && e.version === "2.1.0", 5000, "client-ready 2.1.0");
    await server.waitFor((e) => e.event === "client-ready" && e.version === "1.3.0", 5000, "client-ready 1.3.0");
  });

  it("the fake microphone arrives as 16 kHz mono 20 ms frames", async () => {
    const page = await target.open();
    await target.connect(page, { mic: true });
    const ev = await server.waitFor((e) => e.event === "input-audio", 10000, "a second of input audio");
    assert.equal(ev.rate, 16000);
    assert.equal(ev.channels, 1);
    assert.equal(ev.bytes, 640);
    assert.ok(ev.rms > 0.01, `the fake microphone beeps: RMS ${ev.rms} of full scale`);
    await closePage(page);
  });

  it("Chromium reads the server's RTCP reports, and they answer its own", async () => {
    const page = await target.open();
    await target.connect(page, { mic: true });
    // Chromium sends its first sender report within a few seconds; the
    // server's next receiver report answers it, which gives a round trip.
    await until(page, async () => {
      const s = await window.rtcpStats();
      return s.remoteInbound?.roundTripTime > 0 && s.remoteOutbound?.packetsSent > 50;
    }, undefined, 15000);
    const s = await page.evaluate(() => window.rtcpStats());
    console.log("rtcp as Chromium sees it:", JSON.stringify(s));
    assert.equal(s.remoteInbound.packetsLost, 0, `loss on loopback: ${JSON.stringify(s)}`);
    assert.ok(s.remoteInbound.roundTripTime < 0.5, `round trip on loopback: ${JSON.stringify(s)}`);
    assert.ok(s.remoteOutbound.bytesSent > 0, JSON.stringify(s));
    await closePage(page);
  });

  it("client.disconnect() ends the session on the server at once", async () => {
    const page = await target.open();
    await target.connect(page);
    const before = server.events.filter((e) => e.event === "session-ended").length;
    const t0 = Date.now();
    await page.evaluate(() => window.__client.disconnect());
    const ev = await server.waitFor(() => server.events.filter((e) => e.event === "session-ended").length > before, 3500,
      "the server to notice the disconnect");
    assert.ok(Date.now() - t0 < 3500);
    assert.ok(ev);
    await page.context().close();
  });

  it("a page from another origin connects through the CORS preflight", async () => {
    const other = await servePage();
    try {
      const cross = new Target(browser, other.url, server.url);
      const page = await cross.open();
      const data = await cross.connect(page, { startFlow: true });
      assert.equal(data.version, "2.1.0");
      const got = await page.evaluate(() => window.__client.sendClientRequest("echo", "cors"));
      assert.equal(got, "cors");
      await closePage(page);
    } finally {
      await other.close();
    }
  });

  it("disconnect-bot ends the session from the pipeline", async () => {
    await server.waitFor((e) => e.event === "session-ended" && /pipeline ended/.test(e.reason), 5000,
      "a session ended by disconnect-bot");
  });
});
