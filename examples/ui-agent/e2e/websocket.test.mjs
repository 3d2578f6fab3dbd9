// Voice end-to-end test of the ui-agent demo over Pipecat's WebSocket
// transport: the real page with ?transport=websocket (client-js 1.13,
// @pipecat-ai/websocket-transport 1.7 with the page's own media manager,
// web/src/wsmedia.js) in headless Chromium, against the demo started with
// no configuration (PocketSphinx hears, espeak-ng speaks). espeak-ng says
// each phrase into Chromium's fake microphone; the page sends it as 16 kHz
// PCM in protobuf frames; the bot's 24 kHz frames are played by the page,
// which counts what arrived and what it played (window.__demo.media).
//
// The scenarios: the handshake (POST /ws/connect, the socket it names,
// bot-ready) and the spoken greeting heard; a disconnect and a reconnect
// in the same page, after which the greeting is heard again and a typed
// question is answered; a dictated name transcribed and filled into the
// form; and a barge-in while the bot speaks, after which the bot's audio
// stops reaching the page. The text scenarios (pointing, the form, a job
// group cancelled) run over this transport in demo.test.mjs. Skipped
// without espeak-ng or without the pocketsphinx tag, as offline.test.mjs.
import { test, before, after, describe } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { outDir, WAIT, startServer, launchBrowser, speechWav, unconfigured, userSaid, answered, inViewport } from "./lib.mjs";

let espeak = true;
try {
  execFileSync("espeak-ng", ["--version"], { stdio: "ignore" });
} catch {
  espeak = false;
}
const tags = (process.env.GO_TAGS ?? process.env.TAGS ?? "").split(/\s+/);
const skip = !espeak ? "espeak-ng is not installed" : !tags.includes("pocketsphinx") ? "the server is built without the pocketsphinx tag" : false;

const GREETING = "Hi! I can see this page.";
// One frame of the bot's audio: 20 ms at the player's 24 kHz.
const FRAME_SAMPLES = 480;

let server;
const runs = [];

before(async () => {
  if (skip) return;
  server = await startServer(unconfigured, "websocket-server.log");
});

after(async () => {
  await server?.stop();
  if (runs.length) console.log(`websocket: ${JSON.stringify(runs)}`);
});

// open launches a browser (whose microphone says text, when given) and
// opens the demo on the WebSocket transport. It returns the page, the
// URLs of the sockets it opened, whether any frame the server sent was
// not binary, and the page's errors.
async function open(name, text) {
  const flags = [];
  if (text) flags.push(`--use-file-for-fake-audio-capture=${speechWav(text, { lead: 1, tail: 60 }).path}`);
  const browser = await launchBrowser(flags);
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const s = { name, browser, page, sockets: [], textFrames: 0, errors: [], t0: Date.now() };
  page.on("pageerror", (e) => s.errors.push(e.message));
  page.on("console", (m) => {
    if (m.type() === "error") s.errors.push(m.text());
  });
  page.on("websocket", (ws) => {
    s.sockets.push(ws.url());
    ws.on("framereceived", (f) => {
      if (typeof f.payload === "string") s.textFrames++;
    });
  });
  await page.goto(new URL("/?transport=websocket", server.url).href);
  await page.waitForFunction(() => window.__demo?.ready, null, { timeout: 30000 });
  return s;
}

// close saves a screenshot, records the run and closes the browser; on a
// failure it prints the conversation first.
async function close(s, failed) {
  const { page } = s;
  if (failed) {
    const text = await page.evaluate(() => document.querySelector("[data-testid=conversation]")?.innerText).catch(() => "");
    console.log(`${s.name}: conversation at the failure:\n${text}`);
  }
  await page.screenshot({ path: join(outDir, `${s.name}${failed ? "-failed" : ""}.png`) }).catch(() => {});
  const stats = await mediaStats(page).catch(() => ({}));
  runs.push({ name: s.name, ms: Date.now() - s.t0, frames: stats.frames, energy: round(stats.energy), played: round(stats.playedEnergy), gaps: stats.gaps, sent: stats.sent, ...s.extra });
  await page.evaluate(() => window.__demo?.client?.disconnect()).catch(() => {});
  await s.browser.close();
}

// run runs body on a page opened by open, then closes it.
async function run(name, text, body) {
  const s = await open(name, text);
  let failed = true;
  try {
    await body(s);
    failed = false;
  } finally {
    await close(s, failed);
  }
}

const round = (v) => (typeof v === "number" ? Number(v.toFixed(4)) : v);
const mediaStats = (page) => page.evaluate(() => window.__demo.media.stats());

// heard waits until the page has received and played more of the bot's
// audio than in the stats since, with real energy (level² × seconds, as
// WebRTC's totalAudioEnergy), and returns the new stats.
async function heard(page, since, timeout = 40000) {
  await page.waitForFunction(
    (since) => {
      const s = window.__demo.media.stats();
      return s.energy - since.energy > 0.01 && s.playedEnergy - since.playedEnergy > 0.01;
    },
    since,
    { timeout, polling: 100 },
  );
  return mediaStats(page);
}

// quiet waits until no bot audio arrived for ms and the player is empty.
async function quiet(page, ms = 1000, timeout = 40000) {
  await page.waitForFunction(
    (ms) => {
      const m = window.__demo.media;
      const log = m.arrivals();
      const last = log.length ? log[log.length - 1].t : 0;
      return performance.now() - last > ms && m.stats().queued === 0;
    },
    ms,
    { timeout, polling: 100 },
  );
}

const zero = { energy: 0, playedEnergy: 0 };

describe("the demo over Pipecat's WebSocket transport, by voice", { skip }, () => {
  test("handshake and bot-ready; the greeting's audio is heard; a disconnect and a reconnect in the same page work again", async () => {
    await run("30-websocket-greeting-reconnect", null, async (s) => {
      const { page } = s;
      const ready = await page.evaluate(() => window.__demo.botReady);
      assert.equal(ready.version, "2.1.0");
      assert.equal(ready.about.brain, "offline demo brain");
      assert.equal(s.sockets.length, 1, `sockets: ${s.sockets}`);
      assert.match(s.sockets[0], new RegExp(`^ws://${new URL(server.url).host}/ws/ws\\?session=[0-9a-f-]{36}$`));
      await page.getByText("answers spoken by espeak-ng", { exact: false }).waitFor({ timeout: WAIT });

      // The greeting is spoken: its frames arrive, are played, and the
      // player's output has a level while it plays.
      await page.waitForFunction(() => window.__demo.media.level() > 0.01, null, { timeout: WAIT, polling: 50 });
      await heard(page, zero);
      await answered(page, GREETING);
      await quiet(page);
      const greeting = await mediaStats(page);
      const log = await page.evaluate(() => window.__demo.media.arrivals());
      assert.equal(greeting.samples, greeting.frames * FRAME_SAMPLES, "every frame is 20 ms of 24 kHz mono");
      assert.equal(greeting.played, greeting.samples, "everything that arrived was played");
      // The server paces its audio in real time: the frames of a few
      // seconds of speech arrive over about as long, not in a burst.
      const seconds = greeting.samples / 24000;
      const spread = (log[log.length - 1].t - log[0].t) / 1000;
      assert.ok(seconds > 2, `the greeting is ${seconds}s of audio`);
      assert.ok(spread > 0.8 * seconds, `${seconds}s of audio arrived over ${spread}s`);
      s.extra = { greetingSeconds: round(seconds), arrivalSpread: round(spread), greetingGaps: greeting.gaps };

      // Disconnect, then connect again in the same page.
      const snapshots = await page.evaluate(() => window.__demo.snapshots);
      await page.evaluate(() => window.__demo.client.disconnect());
      await page.waitForFunction(() => !window.__demo.ready, null, { timeout: WAIT });
      await page.getByRole("button", { name: "Reconnect" }).click();
      await page.waitForFunction(() => window.__demo.ready, null, { timeout: 30000 });
      assert.equal(s.sockets.length, 2, `a new socket for the new session: ${s.sockets}`);
      assert.notEqual(s.sockets[1], s.sockets[0]);
      // The new session sees the page at once.
      await page.waitForFunction((n) => window.__demo.snapshots > n, snapshots, { timeout: WAIT });
      // The new session greets again, and it is heard.
      await heard(page, greeting);
      await quiet(page);
      // A typed question is answered, pointed at and spoken.
      const before = await mediaStats(page);
      await page.fill("#say", "where is the iPhone 17?");
      await page.press("#say", "Enter");
      const card = 'li[aria-label="iPhone 17"]';
      await page.waitForSelector(`${card}.ui-highlight, ${card}.ui-highlight-all`, { timeout: WAIT });
      await heard(page, before);
      await answered(page, "The iPhone 17 is in row");
      assert.equal(s.textFrames, 0, "the server sent binary frames only");
      assert.deepEqual(s.errors, []);
    });
  });

  test("say my name is Ada Lovelace: the offline voice transcribes it, the agent fills the form and answers aloud", async () => {
    await run("31-websocket-voice-form", "My name is Ada Lovelace.", async (s) => {
      const { page } = s;
      await answered(page, GREETING);
      await quiet(page);
      await page.waitForFunction(() => window.__demo.snapshots > 0, null, { timeout: WAIT });
      const before = await mediaStats(page);
      await page.getByRole("button", { name: "Turn microphone on" }).click();
      await userSaid(page, "my name is Ada Lovelace");
      await page.waitForFunction(
        () => document.getElementById("first-name").value === "Ada" && document.getElementById("last-name").value === "Lovelace",
        null,
        { timeout: WAIT },
      );
      await inViewport(page, "#first-name");
      await heard(page, before);
      await answered(page, "Got it: first name Ada and last name Lovelace.");
      const st = await mediaStats(page);
      assert.ok(st.sent > 100, `the page sent ${st.sent} chunks of the user's audio`);
      assert.deepEqual(s.errors, []);
    });
  });

  // The interruption is the VAD's: what the recogniser made of the words
  // (it can fall behind on a loaded machine while the bot speaks) does
  // not matter here; the answer to them comes after the user stops.
  test("barge in while the bot speaks: its audio stops reaching the page, and the bot answers after the user", async () => {
    await run("32-websocket-interruption", "Where is the iPhone 17?", async (s) => {
      const { page } = s;
      // The greeting starts; the user speaks over it (1 s after the mic
      // turns on, the file's lead).
      await page.waitForFunction(() => window.__demo.media.stats().frames > 10, null, { timeout: WAIT, polling: 50 });
      await page.getByRole("button", { name: "Turn microphone on" }).click();
      await page.waitForFunction(() => window.__demo.userSpeaking.length > 0, null, { timeout: WAIT, polling: 50 });
      await page.waitForFunction(() => window.__demo.userSpeaking[0].stopped !== undefined, null, { timeout: 30000 });
      // The bot answers what it heard once the user stopped.
      await page.waitForFunction(
        () => {
          const stopped = window.__demo.userSpeaking[0].stopped;
          return window.__demo.media.arrivals(stopped).some((e) => e.rms > 0.001);
        },
        null,
        { timeout: 40000, polling: 100 },
      );

      const { started, stopped, log, clears, said } = await page.evaluate(() => {
        const u = window.__demo.userSpeaking[0];
        return {
          ...u,
          log: window.__demo.media.arrivals(),
          clears: window.__demo.media.stats().clears,
          said: [...document.querySelectorAll('[data-testid=conversation] li[data-role="user"]')].map((li) => li.innerText.trim()),
        };
      });
      const before = log.filter((e) => e.t < started);
      assert.ok(before.some((e) => e.t > started - 500 && e.rms > 0.001), "the bot was speaking when the user barged in");
      // The server stops sending at the interruption; what was in flight
      // arrives within a few frames, then nothing while the user speaks.
      const lateLimit = 400;
      const end = Math.min(stopped, started + 2500);
      const tail = log.filter((e) => e.t >= started && e.t <= started + lateLimit);
      const during = log.filter((e) => e.t > started + lateLimit && e.t < end);
      assert.ok(end - started > lateLimit + 500, `the user spoke for ${stopped - started} ms`);
      assert.equal(during.length, 0, `${during.length} frames of the bot's audio arrived from ${lateLimit} ms after the user started speaking to ${end - started} ms`);
      assert.ok(clears >= 1, "the page dropped the audio it still held");
      const last = [...before, ...tail].pop();
      s.extra = { framesAfterBargeIn: tail.length, lastFrameMs: Math.round(last.t - started), userSpokeMs: Math.round(stopped - started), said };
      assert.deepEqual(s.errors, []);
    });
  });
});
