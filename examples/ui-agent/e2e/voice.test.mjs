// Voice end-to-end test of the ui-agent demo: Chromium's fake microphone
// plays "Where is the iPhone 17?" (synthesized by espeak-ng at test time),
// the page sends it over WebRTC, the server's VAD cuts the utterance and
// sends it to a fake OpenAI-compatible transcription server (this file),
// the demo brain points at the phone, and espeak-ng speaks the answer: the
// transcript shows in the conversation, the card is highlighted, and the
// spoken answer appears as bot output. Skipped without espeak-ng.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createServer } from "node:http";
import { readFileSync, writeFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { outDir, WAIT, startServer, launchBrowser } from "./lib.mjs";

const SAID = "Where is the iPhone 17?";
let espeak = true;
try {
  execFileSync("espeak-ng", ["--version"], { stdio: "ignore" });
} catch {
  espeak = false;
}

let stt, server, browser, page;
const uploads = [];

// speechWav synthesizes text and pads it with silence (so the VAD sees
// the utterance end) into a 16-bit mono WAV for Chromium's fake mic.
function speechWav(text) {
  const dir = mkdtempSync(join(tmpdir(), "ui-agent-voice-"));
  const raw = join(dir, "raw.wav");
  execFileSync("espeak-ng", ["-v", "en-us", "-s", "150", "-w", raw, text]);
  const buf = readFileSync(raw);
  const rate = buf.readUInt32LE(24);
  let off = 12;
  while (off + 8 <= buf.length && buf.toString("ascii", off, off + 4) !== "data") off += 8 + buf.readUInt32LE(off + 4);
  const pcm = buf.subarray(off + 8, off + 8 + buf.readUInt32LE(off + 4));
  const lead = Buffer.alloc(Math.round(rate * 0.5) * 2);
  // Chromium loops the file: a long silence keeps the question from
  // being asked again (and barging in on the answer) during the test.
  const tail = Buffer.alloc(Math.round(rate * 40) * 2);
  const data = Buffer.concat([lead, pcm, tail]);
  const hdr = Buffer.alloc(44);
  hdr.write("RIFF", 0);
  hdr.writeUInt32LE(36 + data.length, 4);
  hdr.write("WAVE", 8);
  hdr.write("fmt ", 12);
  hdr.writeUInt32LE(16, 16);
  hdr.writeUInt16LE(1, 20);
  hdr.writeUInt16LE(1, 22);
  hdr.writeUInt32LE(rate, 24);
  hdr.writeUInt32LE(rate * 2, 28);
  hdr.writeUInt16LE(2, 32);
  hdr.writeUInt16LE(16, 34);
  hdr.write("data", 36);
  hdr.writeUInt32LE(data.length, 40);
  const out = join(dir, "speech.wav");
  writeFileSync(out, Buffer.concat([hdr, data]));
  return { path: out, seconds: pcm.length / 2 / rate };
}

before(async () => {
  if (!espeak) return;
  // The fake transcription server: the first utterance is the question,
  // later ones (the fake mic loops) are silence.
  stt = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      res.setHeader("Content-Type", "application/json");
      // A request without a file (the demo's start-up probe) is refused
      // as a real server would.
      if (!body.includes("filename=")) {
        res.statusCode = 400;
        res.end(JSON.stringify({ error: { message: "no file" } }));
        return;
      }
      uploads.push(body.length);
      res.end(JSON.stringify({ text: uploads.length === 1 && req.url === "/v1/audio/transcriptions" ? SAID : "" }));
    });
  });
  await new Promise((r) => stt.listen(0, "127.0.0.1", r));
  const sttURL = `http://127.0.0.1:${stt.address().port}/v1`;
  // Voice in through the fake server, answers spoken by espeak-ng.
  server = await startServer({ STT_BASE_URL: sttURL, OPENAI_API_KEY: "", DEEPGRAM_API_KEY: "", CARTESIA_API_KEY: "", TTS_BASE_URL: "" }, "voice-server.log");
  const wav = speechWav(SAID);
  browser = await launchBrowser([`--use-file-for-fake-audio-capture=${wav.path}`]);
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
});

after(async () => {
  try {
    await page?.evaluate(() => window.__demo?.client?.disconnect()).catch(() => {});
    await browser?.close();
    await server?.stop();
  } finally {
    await new Promise((r) => (stt ? stt.close(r) : r()));
  }
});

test("voice: say where is the iPhone 17, see it pointed at", { skip: !espeak && "espeak-ng is not installed" }, async () => {
  try {
    await talk();
  } catch (e) {
    const text = await page.evaluate(() => document.querySelector("[data-testid=conversation]")?.innerText).catch(() => "");
    console.log(`conversation at the failure:\n${text}\nuploads: ${uploads}`);
    throw e;
  }
});

async function talk() {  await page.goto(server.url);
  await page.waitForFunction(() => window.__demo?.ready, null, { timeout: 30000 });
  await page.getByText("Voice is on", { exact: false }).waitFor({ timeout: WAIT });
  await page.getByRole("button", { name: "Turn microphone on" }).click();
  const card = 'li[aria-label="iPhone 17"]';
  await page.waitForSelector(`${card}.ui-highlight, ${card}.ui-highlight-all`, { timeout: 30000 });
  await page.waitForFunction(
    (said) => [...document.querySelectorAll('[data-testid=conversation] li[data-role="user"]')].some((li) => li.textContent.includes(said)),
    SAID,
    { timeout: WAIT },
  );
  // The answer is spoken; its text (bot-output) comes as the audio ends.
  await page.waitForFunction(
    () => [...document.querySelectorAll('[data-testid=conversation] li[data-role="assistant"] .bubble')].some((b) => b.textContent.includes("The iPhone 17 is in row")),
    null,
    { timeout: 40000 },
  );
  assert.ok(uploads[0] > 16000 * 2 * 0.8, `the first utterance upload was ${uploads[0]} bytes, want about a second of 16 kHz audio or more`);
  await page.screenshot({ path: join(outDir, "10-voice.png") });
}
