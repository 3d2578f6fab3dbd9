// Shared setup of the ui-agent browser tests: build and start the Go
// server, launch Debian Chromium with the flags of smallwebrtc.md §6.4.
import { spawn, execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { mkdirSync, mkdtempSync, createWriteStream, existsSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const example = resolve(here, "..");
export const repo = resolve(example, "../..");
const require = createRequire(join(example, "web", "package.json"));
export const { chromium } = require("playwright-core");

export const outDir = resolve(process.env.E2E_OUT_DIR || join(example, "out", "e2e"));
export const browserPath = process.env.CHROMIUM || "/usr/bin/chromium";
export const WAIT = 15000;

let binary;

// buildServer builds the demo once per test process, with the page
// embedded. TAGS (as in the Makefile and e2e/) or GO_TAGS set build tags.
export function buildServer() {
  if (binary) return binary;
  mkdirSync(outDir, { recursive: true });
  if (!existsSync(join(example, "web", "dist", "app.js"))) {
    throw new Error("the page bundle is missing: run examples/ui-agent/build.sh first");
  }
  const bin = join(mkdtempSync(join(tmpdir(), "ui-agent-e2e-")), "ui-agent");
  const tagList = process.env.GO_TAGS ?? process.env.TAGS ?? "";
  const tags = tagList.trim() ? ["-tags", tagList] : [];
  execFileSync("go", ["build", ...tags, "-o", bin, "./examples/ui-agent"], { cwd: repo, stdio: "inherit" });
  binary = bin;
  return bin;
}

// startServer starts the demo on a free port with env added to the
// environment (the demo brain is forced), logging to out/<log>. It
// resolves to {url, stop}.
export async function startServer(env, log) {
  const bin = buildServer();
  const logFile = createWriteStream(join(outDir, log));
  const server = spawn(bin, ["-addr", "127.0.0.1:0", "-v"], {
    env: { ...process.env, FRAMEWIRE_BRAIN: "demo", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise((res) => server.once("exit", (code, signal) => res({ code, signal })));
  server.stdout.pipe(logFile);
  const url = await new Promise((res, rej) => {
    let buf = "";
    const timer = setTimeout(() => rej(new Error(`the server did not start:\n${buf}`)), 60000);
    server.stderr.on("data", (d) => {
      logFile.write(d);
      buf += d;
      const m = buf.match(/open (http:\/\/127\.0\.0\.1:\d+\/)/);
      if (m) {
        clearTimeout(timer);
        res(m[1]);
      }
    });
    server.once("exit", (code) => rej(new Error(`the server exited (${code}):\n${buf}`)));
  });
  const stop = async () => {
    if (server.exitCode !== null) return;
    server.kill("SIGINT");
    const killer = setTimeout(() => server.kill("SIGKILL"), 15000);
    await exited;
    clearTimeout(killer);
  };
  return { url, stop };
}

// launchBrowser starts headless Chromium; extra flags are appended.
export function launchBrowser(extra = []) {
  if (!existsSync(browserPath)) {
    throw new Error(`no Chromium at ${browserPath}: install Debian's chromium (apt-get install chromium) or set CHROMIUM`);
  }
  return chromium.launch({
    executablePath: browserPath,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--use-fake-ui-for-media-stream",
      "--use-fake-device-for-media-stream",
      "--autoplay-policy=no-user-gesture-required",
      "--disable-features=WebRtcHideLocalIpsWithMdns",
      ...extra,
    ],
  });
}

// speechWav synthesizes text with espeak-ng (voice en-us unless given)
// into a 16-bit mono WAV for Chromium's fake microphone
// (--use-file-for-fake-audio-capture), with lead seconds of silence before
// the speech and tail seconds after it. Chromium loops the file, so a
// long tail keeps the phrase from being said again during a test. It
// returns the path and the speech's duration in seconds.
export function speechWav(text, { lead = 0.5, tail = 40, voice = "en-us" } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "ui-agent-voice-"));
  const raw = join(dir, "raw.wav");
  execFileSync("espeak-ng", ["-v", voice, "-s", "150", "-w", raw, text]);
  const buf = readFileSync(raw);
  const rate = buf.readUInt32LE(24);
  let off = 12;
  while (off + 8 <= buf.length && buf.toString("ascii", off, off + 4) !== "data") off += 8 + buf.readUInt32LE(off + 4);
  const pcm = buf.subarray(off + 8, off + 8 + buf.readUInt32LE(off + 4));
  const data = Buffer.concat([Buffer.alloc(Math.round(rate * lead) * 2), pcm, Buffer.alloc(Math.round(rate * tail) * 2)]);
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

// unconfigured is the environment of a demo started with no
// configuration: every variable that configures a model or a speech
// service is cleared, whatever the caller's environment holds.
export const unconfigured = Object.fromEntries(
  [
    "FRAMEWIRE_BRAIN", "UI_AGENT_VOICE", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "OPENAI_REALTIME_MODEL",
    "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "GOOGLE_API_KEY", "GEMINI_API_KEY", "GEMINI_BASE_URL",
    "STT_BASE_URL", "STT_MODEL", "TTS_BASE_URL", "TTS_VOICE", "DEEPGRAM_API_KEY", "ASSEMBLYAI_API_KEY", "ASSEMBLYAI_BASE_URL",
    "CARTESIA_API_KEY", "CARTESIA_VOICE_ID", "ELEVENLABS_API_KEY", "ELEVENLABS_VOICE_ID", "ELEVENLABS_BASE_URL",
  ].map((k) => [k, ""]),
);

// userSaid waits until a user entry of the page's conversation contains
// part (a transcript or a typed message).
export function userSaid(page, part, timeout = WAIT) {
  return page.waitForFunction(
    (part) => [...document.querySelectorAll('[data-testid=conversation] li[data-role="user"]')].some((li) => li.textContent.includes(part)),
    part,
    { timeout },
  );
}

// answered waits until an agent entry of the page's conversation contains
// part.
export function answered(page, part, timeout = 40000) {
  return page.waitForFunction(
    (part) => [...document.querySelectorAll('[data-testid=conversation] li[data-role="assistant"] .bubble')].some((b) => b.textContent.includes(part)),
    part,
    { timeout },
  );
}

// inViewport waits until the element of selector is wholly on screen.
export function inViewport(page, selector, timeout = WAIT) {
  return page.waitForFunction(
    (sel) => {
      const r = document.querySelector(sel)?.getBoundingClientRect();
      return r && r.top >= 0 && r.bottom <= window.innerHeight && r.height > 0;
    },
    selector,
    { timeout },
  );
}
