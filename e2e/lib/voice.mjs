// Pieces of the browser voice test (test/voice.test.mjs): speech for
// Chromium's fake microphone synthesized by espeak-ng, fake OpenAI-compatible
// transcription and chat servers, examples/voice-bot started with its
// services pointed at them, a page server that also proxies the bot's
// signalling (same origin: the bot enables no CORS), and Chromium launched
// with the fake-microphone file.
import { spawn, execFileSync } from "node:child_process";
import { createServer, request as httpRequest } from "node:http";
import { readFile } from "node:fs/promises";
import { readFileSync, writeFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, normalize } from "node:path";
import { chromium } from "playwright-core";
import { CHROMIUM, e2eDir, goBuild, repo } from "./harness.mjs";

// hasEspeak reports whether espeak-ng runs here.
export function hasEspeak() {
  try {
    execFileSync("espeak-ng", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

// --- WAV -------------------------------------------------------------------

// parseWav reads a 16-bit PCM WAV: its rate, channels and samples (the
// data chunk), skipping any other chunks. It throws on anything else.
export function parseWav(buf) {
  if (buf.length < 12 || buf.toString("ascii", 0, 4) !== "RIFF" || buf.toString("ascii", 8, 12) !== "WAVE") {
    throw new Error(`not a RIFF/WAVE file (${buf.length} bytes)`);
  }
  let fmt = null;
  for (let off = 12; off + 8 <= buf.length;) {
    const id = buf.toString("ascii", off, off + 4);
    let size = buf.readUInt32LE(off + 4);
    const body = off + 8;
    if (id === "fmt ") {
      fmt = { format: buf.readUInt16LE(body), channels: buf.readUInt16LE(body + 2), rate: buf.readUInt32LE(body + 4), bits: buf.readUInt16LE(body + 14) };
    } else if (id === "data") {
      if (!fmt) throw new Error("WAV data chunk before its fmt chunk");
      if (fmt.format !== 1 || fmt.bits !== 16) throw new Error(`WAV is format ${fmt.format} with ${fmt.bits} bits, want 16-bit PCM`);
      // Streamed WAVs (espeak-ng --stdout) carry a placeholder size.
      if (size === 0xffffffff || body + size > buf.length) size = buf.length - body;
      const pcm = buf.subarray(body, body + size - (size % 2));
      return { rate: fmt.rate, channels: fmt.channels, pcm, seconds: pcm.length / 2 / fmt.channels / fmt.rate };
    }
    off = body + size + (size % 2);
  }
  throw new Error("WAV without a data chunk");
}

// wavBytes wraps mono 16-bit PCM in a 44-byte WAV header.
export function wavBytes(pcm, rate) {
  const hdr = Buffer.alloc(44);
  hdr.write("RIFF", 0);
  hdr.writeUInt32LE(36 + pcm.length, 4);
  hdr.write("WAVE", 8);
  hdr.write("fmt ", 12);
  hdr.writeUInt32LE(16, 16);
  hdr.writeUInt16LE(1, 20); // PCM
  hdr.writeUInt16LE(1, 22); // mono
  hdr.writeUInt32LE(rate, 24);
  hdr.writeUInt32LE(rate * 2, 28);
  hdr.writeUInt16LE(2, 32);
  hdr.writeUInt16LE(16, 34);
  hdr.write("data", 36);
  hdr.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([hdr, pcm]);
}

// resampleLinear converts mono 16-bit PCM between rates by linear
// interpolation: plenty for speech that only has to trip a VAD.
export function resampleLinear(pcm, from, to) {
  if (from === to) return pcm;
  const n = pcm.length >> 1;
  const m = Math.floor((n * to) / from);
  const out = Buffer.alloc(m * 2);
  for (let i = 0; i < m; i++) {
    const x = (i * from) / to;
    const j = Math.floor(x);
    const a = pcm.readInt16LE(Math.min(j, n - 1) * 2);
    const b = pcm.readInt16LE(Math.min(j + 1, n - 1) * 2);
    out.writeInt16LE(Math.round(a + (b - a) * (x - j)), i * 2);
  }
  return out;
}

// trimSilence drops the near-silent samples espeak-ng puts around speech,
// so an utterance's start and end in the composed file are where the
// voice is.
function trimSilence(pcm, threshold = 300) {
  const n = pcm.length >> 1;
  let a = 0;
  while (a < n && Math.abs(pcm.readInt16LE(a * 2)) < threshold) a++;
  let b = n;
  while (b > a && Math.abs(pcm.readInt16LE((b - 1) * 2)) < threshold) b--;
  return pcm.subarray(a * 2, b * 2);
}

// FAKE_MIC_RATE is the rate of the composed file. Chromium's fake capture
// device reads 16-bit PCM WAV at any rate and converts it to the capture
// rate itself; 48 kHz is what it captures at, so nothing is converted twice.
export const FAKE_MIC_RATE = 48000;

// composeSpeech writes the fake microphone's WAV: parts are {silence: s}
// or {say: text}, spoken by espeak-ng (en-us, speed words per minute). It
// returns the file and where each utterance starts and ends in it, in
// seconds.
export function composeSpeech(parts, { speed = 160 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "framewire-voice-"));
  const chunks = [];
  const utterances = [];
  let at = 0;
  for (const part of parts) {
    if (part.silence !== undefined) {
      const pcm = Buffer.alloc(Math.round(part.silence * FAKE_MIC_RATE) * 2);
      chunks.push(pcm);
      at += part.silence;
      continue;
    }
    const raw = join(dir, `say${utterances.length}.wav`);
    execFileSync("espeak-ng", ["-v", "en-us", "-s", String(speed), "-w", raw, part.say]);
    const w = parseWav(readFileSync(raw));
    const pcm = resampleLinear(trimSilence(w.pcm), w.rate, FAKE_MIC_RATE);
    const seconds = pcm.length / 2 / FAKE_MIC_RATE;
    utterances.push({ text: part.say, start: at, end: at + seconds, seconds });
    chunks.push(pcm);
    at += seconds;
  }
  const path = join(dir, "fake-mic.wav");
  writeFileSync(path, wavBytes(Buffer.concat(chunks), FAKE_MIC_RATE));
  return { path, seconds: at, utterances };
}

// --- fake services -----------------------------------------------------------

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return Buffer.concat(chunks);
}

function listen(server) {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${server.address().port}`)));
}

function closeServer(server) {
  server.closeAllConnections?.();
  return new Promise((resolve) => server.close(() => resolve()));
}

// fakeTranscriber is an OpenAI-compatible transcription server
// (POST /v1/audio/transcriptions, multipart with a WAV "file"). It records
// each upload (seconds of audio, rate, model, arrival time) and answers
// transcript(upload, index) as {"text": ...}.
export async function fakeTranscriber(transcript) {
  const uploads = [];
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const reply = (status, obj) => {
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(JSON.stringify(obj));
    };
    if (req.method !== "POST" || req.url !== "/v1/audio/transcriptions") {
      reply(404, { error: { message: `no route ${req.method} ${req.url}` } });
      return;
    }
    try {
      // undici's Request parses multipart/form-data.
      const form = await new Request("http://stt/", { method: "POST", headers: { "content-type": req.headers["content-type"] }, body }).formData();
      const file = form.get("file");
      if (!file || typeof file === "string") throw new Error("no file part");
      const wav = parseWav(Buffer.from(await file.arrayBuffer()));
      const upload = { at: Date.now(), seconds: wav.seconds, rate: wav.rate, channels: wav.channels, model: form.get("model"), filename: file.name };
      uploads.push(upload);
      reply(200, { text: transcript(upload, uploads.length - 1) });
    } catch (e) {
      reply(400, { error: { message: `bad transcription request: ${e.message}` } });
    }
  });
  const url = await listen(server);
  return { url: `${url}/v1`, uploads, close: () => closeServer(server) };
}

// fakeChat is an OpenAI-compatible Chat Completions server that streams
// (SSE) answer(request, index) word by word with no delay, then a stop
// chunk and [DONE]. It records each request's messages.
export async function fakeChat(answer) {
  const requests = [];
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      res.writeHead(404, { "Content-Type": "application/json" }).end(JSON.stringify({ error: { message: `no route ${req.url}` } }));
      return;
    }
    let request;
    try {
      request = JSON.parse(body.toString("utf8"));
    } catch (e) {
      res.writeHead(400, { "Content-Type": "application/json" }).end(JSON.stringify({ error: { message: String(e) } }));
      return;
    }
    const index = requests.push({ at: Date.now(), messages: request.messages, stream: request.stream }) - 1;
    const text = answer(request, index);
    const id = `chatcmpl-e2e${index}`;
    const created = Math.floor(Date.now() / 1000);
    const chunk = (delta, finish = null) =>
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: request.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
    let out = chunk({ role: "assistant", content: "" });
    text.split(/(?=\s)/).forEach((w) => { out += chunk({ content: w }); });
    out += chunk({}, "stop");
    out += `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: request.model, choices: [], usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 } })}\n\n`;
    out += "data: [DONE]\n\n";
    res.end(out);
  });
  const url = await listen(server);
  return { url: `${url}/v1`, requests, close: () => closeServer(server) };
}

// --- the bot, the page, the browser -----------------------------------------

// startVoiceBot builds examples/voice-bot and runs it on a free port with
// exactly the given service variables (the test's own environment must
// not pick a cloud service). It resolves to {url, log, stop}.
export async function startVoiceBot(env) {
  const bin = goBuild("./examples/voice-bot", "voice-bot");
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) =>
    !/^(OPENAI_|STT_|TTS_|DEEPGRAM_|CARTESIA_|VOICE_|ESPEAK_|SYSTEM_PROMPT$|ADDR$)/.test(k)));
  const proc = spawn(bin, [], { cwd: repo, env: { ...clean, ADDR: "127.0.0.1:0", VOICE_DEBUG: "1", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const log = [];
  let text = "";
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`voice-bot did not start in 60 s:\n${text}`)), 60000);
    const onData = (d) => {
      const s = String(d);
      if (process.env.E2E_VERBOSE) process.stderr.write(s);
      text += s;
      for (const line of s.split("\n")) if (line) log.push(line);
      const m = text.match(/offers at (http:\/\/\S+)\/api\/offer/);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    };
    proc.stdout.on("data", onData);
    proc.stderr.on("data", onData);
    proc.once("exit", (code) => { clearTimeout(timer); reject(new Error(`voice-bot exited with ${code}:\n${text}`)); });
  });
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((r) => proc.once("exit", r));
    proc.kill("SIGTERM");
    const killer = setTimeout(() => proc.kill("SIGKILL"), 15000);
    await exited;
    clearTimeout(killer);
  };
  return { url, log, stop };
}

// servePageFor serves index.html and dist/, and proxies the
// SmallWebRTC signalling paths to the bot, so the page and the bot share
// an origin.
export async function servePageFor(botURL) {
  const bot = new URL(botURL);
  const server = createServer(async (req, res) => {
    const path = normalize(new URL(req.url, "http://x").pathname).replace(/^\/+/, "") || "index.html";
    if (path === "api/offer" || path === "start" || path.startsWith("sessions/")) {
      const body = await readBody(req);
      const up = httpRequest({ host: bot.hostname, port: bot.port, method: req.method, path: req.url, headers: { ...req.headers, host: bot.host } }, (r) => {
        res.writeHead(r.statusCode, r.headers);
        r.pipe(res);
      });
      up.on("error", (e) => res.writeHead(502).end(String(e)));
      up.end(body);
      return;
    }
    if (!/^(index\.html|dist\/[\w.-]+\.js)$/.test(path)) { res.writeHead(404).end(); return; }
    try {
      const body = await readFile(join(e2eDir, path));
      res.writeHead(200, { "Content-Type": path.endsWith(".js") ? "text/javascript" : "text/html" }).end(body);
    } catch { res.writeHead(404).end(); }
  });
  const url = await listen(server);
  return { url, close: () => closeServer(server) };
}

// launchWithFakeMic starts headless Chromium (the flags of smallwebrtc.md
// §6.4) whose fake microphone plays wavPath once (%noloop: afterwards it
// captures silence, so nothing is said twice).
export function launchWithFakeMic(wavPath) {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox", "--disable-gpu", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
      "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
      `--use-file-for-fake-audio-capture=${wavPath}%noloop`,
      "--autoplay-policy=no-user-gesture-required",
      "--allow-loopback-in-peer-connection",
      "--disable-features=WebRtcHideLocalIpsWithMdns",
    ],
  });
}
