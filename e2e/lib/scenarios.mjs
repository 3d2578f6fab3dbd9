// The browser-visible scenarios of the conformance bot (docs/protocol.md §10) that need
// no UI agent, written once and run against any bot: the e2e server
// (test/transport.test.mjs) and examples/conformance
// (test/conformance.test.mjs). Row numbers are the spec's.
import { it } from "node:test";
import assert from "node:assert/strict";
import { until, closePage } from "./harness.mjs";

// rawMatching waits for a raw server frame that satisfies pred and
// returns it parsed.
async function rawMatching(page, pred, timeout = 5000) {
  const src = pred.toString();
  await page.waitForFunction((src) => {
    const p = eval(src);
    return window.__e2e.raw.some((m) => { try { return p(JSON.parse(m)); } catch { return false; } });
  }, src, { timeout });
  return page.evaluate((src) => {
    const p = eval(src);
    return JSON.parse(window.__e2e.raw.find((m) => { try { return p(JSON.parse(m)); } catch { return false; } }));
  }, src);
}

export function conformanceScenarios(target) {
  it("1 handshake: client-ready 2.1.0 gets bot-ready 2.1.0", async () => {
    const page = await target().open();
    const data = await target().connect(page);
    assert.equal(data.version, "2.1.0");
    assert.ok(data.about, "bot-ready has about");
    const states = (await page.evaluate(() => window.__e2e.log)).filter((l) => l.startsWith("state ")).map((l) => l.slice(6));
    for (const s of ["connecting", "connected", "ready"]) assert.ok(states.includes(s), `state ${s} in ${states}`);
    assert.ok(states.indexOf("connected") < states.indexOf("ready"));
    assert.ok(await page.evaluate(() => window.pcId()), "the client stored a pc_id");
    await closePage(page);
  });

  it("2 start flow: /start then the session offer path", async () => {
    const page = await target().open();
    const data = await target().connect(page, { startFlow: true });
    assert.equal(data.version, "2.1.0");
    await closePage(page);
  });

  it("3 echo: server-response carries the data unchanged, non-ASCII intact", async () => {
    const page = await target().open();
    await target().connect(page);
    const got = await page.evaluate(() => window.__client.sendClientRequest("echo", { x: 1, s: "héllo" }));
    assert.deepEqual(got, { x: 1, s: "héllo" });
    await closePage(page);
  });

  it("4 ui-command: a client-message becomes ui-command {command, payload}", async () => {
    const page = await target().open();
    await target().connect(page);
    await page.evaluate(() => window.__client.sendClientMessage("ui-command", { command: "toast", payload: { title: "Saved", n: 2 } }));
    const m = await rawMatching(page, (m) => m.type === "ui-command");
    assert.equal(m.label, "rtvi-ai");
    assert.equal(m.id, undefined, "ui-command carries no id");
    assert.deepEqual(m.data, { command: "toast", payload: { title: "Saved", n: 2 } });
    await closePage(page);
  });

  it("6 ui-event: server-message {type:ui_event, event, payload}", async () => {
    const page = await target().open();
    await target().connect(page);
    await page.evaluate(() => window.rtvi("ui-event", { event: "clicked", payload: { ref: "e7" } }));
    const m = await rawMatching(page, (m) => m.type === "server-message" && m.data && m.data.type === "ui_event");
    assert.deepEqual(m.data, { type: "ui_event", event: "clicked", payload: { ref: "e7" } });
    await closePage(page);
  });

  it("9 send-text: bot-llm-started, text reading 'echo: C', bot-llm-stopped", async () => {
    const page = await target().open();
    await target().connect(page);
    await page.evaluate(() => window.__client.sendText("héllo there"));
    await rawMatching(page, (m) => m.type === "bot-llm-stopped");
    const seq = await page.evaluate(() => window.__e2e.raw.map((m) => JSON.parse(m)).filter((m) => m.type && m.type.startsWith("bot-llm-")));
    assert.equal(seq[0].type, "bot-llm-started");
    assert.equal(seq.at(-1).type, "bot-llm-stopped");
    const text = seq.filter((m) => m.type === "bot-llm-text").map((m) => m.data.text).join("");
    assert.equal(text, "echo: héllo there");
    await closePage(page);
  });

  it("10 bad input: replies as specified and never a disconnect", async () => {
    const page = await target().open();
    await target().connect(page);
    await page.evaluate(() => {
      window.sendRaw("{this is not json");
      window.sendRaw(JSON.stringify({ label: "rtvi-ai", type: "client-message", data: { t: "echo", d: 1 } }));
      window.sendRaw(JSON.stringify({ label: "rtvi-ai", type: "frobnicate", id: "hfrob001" }));
      window.sendRaw(JSON.stringify({ label: "rtvi-ai", type: "ui-event", id: "hevt0001", data: { payload: {} } }));
    });
    const noID = await rawMatching(page, (m) => m.type === "error");
    assert.match(noID.data.error, /^Invalid RTVI transport message: /);
    assert.equal(noID.data.fatal, false);
    assert.equal(noID.id, undefined);
    const frob = await rawMatching(page, (m) => m.id === "hfrob001");
    assert.equal(frob.type, "error-response");
    assert.equal(frob.data.error, "Unsupported type frobnicate");
    const evt = await rawMatching(page, (m) => m.id === "hevt0001");
    assert.equal(evt.type, "error-response");
    assert.match(evt.data.error, /^Invalid message: /);
    const got = await page.evaluate(() => window.__client.sendClientRequest("echo", "still here"));
    assert.equal(got, "still here");
    assert.equal(await page.evaluate(() => window.__client.state), "ready");
    assert.equal(await page.evaluate(() => window.__transport.dc.readyState), "open");
    await closePage(page);
  });

  it("11 disconnect-bot: peerLeft within 3 s", async () => {
    const page = await target().open();
    await target().connect(page);
    const t0 = Date.now();
    await page.evaluate(() => window.__client.disconnectBot());
    await until(page, () => window.__e2e.botDisconnected, undefined, 3000);
    assert.ok(Date.now() - t0 < 3000);
    await closePage(page);
  });

  it("12 bot audio: onTrackStarted within 5 s, inbound audio on mid 0", async () => {
    const page = await target().open();
    await target().connect(page);
    await until(page, () => window.__e2e.trackStarted.includes("audio"), undefined, 5000);
    await until(page, async () => { const s = await window.inboundAudio(); return s && s.packets > 50; }, undefined, 5000);
    const stats = await page.evaluate(() => window.inboundAudio());
    assert.equal(stats.mid, "0");
    assert.match(stats.mimeType, process.env.TAGS === "" ? /^audio\/PCMU$/i : /^audio\/opus$/i);
    await closePage(page);
  });

  it("13 legacy: client-js 1.9 gets bot-ready 1.3.0 and a working echo", async () => {
    const page = await target().open({ legacy: true });
    const data = await target().connect(page);
    assert.equal(data.version, "1.3.0");
    const got = await page.evaluate(() => window.__client.sendClientRequest("echo", { legacy: true }));
    assert.deepEqual(got, { legacy: true });
    await closePage(page);
  });

  it("14 reconnect: a client comes back, then two at once, all independent", async () => {
    const first = await target().open();
    await target().connect(first);
    const firstId = await first.evaluate(() => window.pcId());
    await first.evaluate(() => window.__client.disconnect());
    await target().connect(first);
    const againId = await first.evaluate(() => window.pcId());
    assert.notEqual(againId, firstId);
    await first.evaluate(() => window.__client.disconnect());
    const [a, b] = await Promise.all([target().open(), target().open()]);
    await Promise.all([target().connect(a), target().connect(b)]);
    const ids = await Promise.all([a, b].map((p) => p.evaluate(() => window.pcId())));
    assert.notEqual(ids[0], ids[1]);
    const echoes = await Promise.all([a, b].map((p, i) => p.evaluate((i) => window.__client.sendClientRequest("echo", { i }), i)));
    assert.deepEqual(echoes, [{ i: 0 }, { i: 1 }]);
    await Promise.all([first, a, b].map(closePage));
  });
}

// jobGroupScenarios are rows 7, 8 and 13 of the conformance bot's table
// (docs/protocol.md §10) in the browser: a job group started with a
// client-message, seen in the client's own vocabulary, and cancelled from
// the page. They need examples/conformance (the e2e server has no groups).
export function jobGroupScenarios(target) {
  for (const tc of [
    { name: "7, 8: client-js 1.13 sees ui-job-group and cancels with ui-cancel-job-group", legacy: false,
      type: "ui-job-group", id: "job_id", workers: "workers", worker: "worker_name", update: "job_update",
      completed: "job_completed", cancel: "ui-cancel-job-group", other: /"(task_id|agents|agent_name|task_update|task_completed)"/ },
    { name: "13: client-js 1.9 sees ui-task and cancels with ui-cancel-task", legacy: true,
      type: "ui-task", id: "task_id", workers: "agents", worker: "agent_name", update: "task_update",
      completed: "task_completed", cancel: "ui-cancel-task", other: /"(job_id|workers|worker_name|job_update|job_completed)"/ },
  ]) {
    it(tc.name, async () => {
      const page = await target().open({ legacy: tc.legacy });
      await target().connect(page);
      await page.evaluate(() => window.__client.sendClientMessage("start-job-group", { workers: ["alpha", "beta"], label: "Research", hold_ms: 60000 }));
      // groupOf waits for the envelopes of one kind (null, not an empty
      // list, until one arrives: waitForFunction waits for a falsy value).
      const groupOf = (kind) => page.waitForFunction(([type, kind]) => {
        const list = window.__e2e.raw.map((r) => { try { return JSON.parse(r); } catch { return null; } })
          .filter((m) => m && m.type === type && m.data && m.data.kind === kind);
        return list.length ? list : null;
      }, [tc.type, kind], { timeout: 5000 }).then((h) => h.jsonValue());
      const [started] = await groupOf("group_started");
      assert.deepEqual(started.data[tc.workers], ["alpha", "beta"]);
      assert.equal(started.data.label, "Research");
      const id = started.data[tc.id];
      assert.ok(id, `group_started has ${tc.id}`);
      await page.waitForFunction(([type, kind]) => window.__e2e.raw.filter((r) => r.includes(`"type":"${type}"`) && r.includes(`"kind":"${kind}"`)).length >= 2,
        [tc.type, tc.update], { timeout: 5000 });
      // The page cancels the held group; both workers end cancelled, then
      // the group completes, within 2 s.
      const t0 = Date.now();
      await page.evaluate(([type, key, id]) => window.rtvi(type, { [key]: id, reason: "the user closed the card" }), [tc.cancel, tc.id, id]);
      const [done] = await groupOf("group_completed");
      assert.ok(Date.now() - t0 < 2000, `group_completed after ${Date.now() - t0} ms`);
      assert.equal(done.data[tc.id], id);
      const completions = await page.evaluate(([type, kind]) => window.__e2e.raw.map((r) => JSON.parse(r))
        .filter((m) => m.type === type && m.data.kind === kind), [tc.type, tc.completed]);
      assert.deepEqual(completions.map((m) => [m.data[tc.worker], m.data.status]).sort(), [["alpha", "cancelled"], ["beta", "cancelled"]]);
      const envelopes = await page.evaluate((type) => window.__e2e.raw.filter((r) => r.includes(`"type":"${type}"`)), tc.type);
      for (const e of envelopes) assert.doesNotMatch(e, tc.other, "the envelopes keep to the client's vocabulary");
      await closePage(page);
    });
  }
}
