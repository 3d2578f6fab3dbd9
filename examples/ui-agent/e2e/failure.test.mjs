// No answer is lost when a service fails: the real demo page in headless
// Chromium against the real Go server, with speech services that fail.
// A TTS that answers 500 (with an upstream body that must not reach the
// page), a TTS that never answers, and a model that never answers: each
// time the answer (or the fallback answer) appears in the conversation
// panel, with at most one note about speech, and no upstream text.
//
// Run it with examples/ui-agent/e2e/run.sh, or `node --test
// examples/ui-agent/e2e/failure.test.mjs` once the bundle is built.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { WAIT, startServer, launchBrowser } from "./lib.mjs";
import { startFakeOpenAI } from "./fake-openai.mjs";

const SECRET = "sk-proj-SECRET at gateway 10.9.8.7";

// startSpeechServer is an OpenAI-compatible speech server on loopback.
// Its transcription endpoint refuses what it gets (the demo's start-up
// probe; nobody speaks here). Its speech endpoint refuses the probe (no
// input) like a real server, and then, for real requests, answers 500 with
// an upstream-looking HTML body (mode "500") or never answers ("hang").
async function startSpeechServer(mode) {
  const held = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      if (req.url === "/v1/audio/speech" && body.includes('"input"')) {
        if (mode === "hang") {
          held.push(res);
          return;
        }
        res.writeHead(500, { "Content-Type": "text/html" });
        res.end(`<html><body>Internal error: ${SECRET}</body></html>`);
        return;
      }
      res.writeHead(400, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ error: { message: "bad request" } }));
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${server.address().port}/v1`,
    close: () => new Promise((r) => { for (const res of held) res.destroy(); server.closeAllConnections(); server.close(r); }),
  };
}

// startSilentModel is an OpenAI-compatible chat server that accepts every
// request and never answers.
async function startSilentModel() {
  const held = [];
  const server = createServer((req, res) => held.push(res));
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${server.address().port}/v1`,
    close: () => new Promise((r) => { for (const res of held) res.destroy(); server.closeAllConnections(); server.close(r); }),
  };
}

// session opens the demo against env and returns helpers over its page.
async function session(env, log) {
  const server = await startServer(env, log);
  const browser = await launchBrowser();
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(server.url);
  await page.waitForFunction(() => window.__demo?.ready, null, { timeout: 30000 });
  const entries = (role) => page.evaluate((role) =>
    [...document.querySelectorAll(`[data-testid=conversation] li[data-role="${role}"]`)].map((li) => li.innerText), role);
  return {
    page,
    entries,
    say: async (text) => {
      await page.fill("#say", text);
      await page.press("#say", "Enter");
    },
    answered: (part, timeout) => page.waitForFunction(
      (part) => [...document.querySelectorAll('[data-testid=conversation] li[data-role="assistant"] .bubble')].some((b) => b.textContent.includes(part)),
      part, { timeout }),
    close: async () => {
      await page.evaluate(() => window.__demo?.client?.disconnect()).catch(() => {});
      await browser.close();
      await server.stop();
    },
  };
}

for (const mode of ["500", "hang"]) {
  describe(`a TTS that ${mode === "500" ? "answers 500" : "never answers"}`, () => {
    let speech, s;
    before(async () => {
      speech = await startSpeechServer(mode);
      s = await session({ STT_BASE_URL: speech.url, TTS_BASE_URL: speech.url, OPENAI_API_KEY: "", DEEPGRAM_API_KEY: "",
        CARTESIA_API_KEY: "", ELEVENLABS_API_KEY: "", ASSEMBLYAI_API_KEY: "", UI_AGENT_SPEECH_TIMEOUT: "2s" }, `tts-${mode}-server.log`);
    });
    after(async () => {
      await s?.close();
      await speech?.close();
    });

    test("the answer to a pointing question still appears, with one note about speech", async () => {
      await s.page.getByText("Voice is on", { exact: false }).waitFor({ timeout: WAIT });
      // The greeting fails to be spoken first, and is shown as text.
      await s.answered("Hi! I can see this page.", 20000);
      await s.say("where is the iPhone 17?");
      await s.answered("The iPhone 17 is in row", 30000);
      const card = 'li[aria-label="iPhone 17"]';
      await s.page.waitForSelector(`${card}.ui-highlight, ${card}.ui-highlight-all`, { timeout: WAIT });
      const notes = await s.entries("system");
      const speechNotes = notes.filter((n) => /speech/i.test(n));
      assert.equal(speechNotes.length, 1, `notes about speech: ${JSON.stringify(notes)}`);
      assert.match(speechNotes[0], /Speech output (is unavailable|ran into a problem)/);
      for (const n of notes) {
        assert.ok(!n.includes("SECRET") && !n.includes("10.9.8.7") && !/unknown/i.test(n), `a note shows ${n}`);
      }
    });
  });
}

describe("a model that never answers", () => {
  let model, s;
  before(async () => {
    model = await startSilentModel();
    s = await session({ FRAMEWIRE_BRAIN: "", OPENAI_BASE_URL: model.url, OPENAI_API_KEY: "sk-e2e", OPENAI_MODEL: "gpt-e2e",
      UI_AGENT_VOICE: "off", UI_AGENT_WATCHDOG: "3s" }, "llm-hang-server.log");
  });
  after(async () => {
    await s?.close();
    await model?.close();
  });

  test("the fallback answer appears within the watchdog time", async () => {
    const t0 = Date.now();
    await s.say("where is the iPhone 17?");
    await s.answered("Sorry, I lost my train of thought", 15000);
    assert.ok(Date.now() - t0 < 10000, `the fallback came after ${Date.now() - t0} ms with a 3 s watchdog`);
  });
});

describe("only an OpenAI-compatible base URL, whose server has no audio endpoints", () => {
  let model, s;
  before(async () => {
    model = await startFakeOpenAI();
    s = await session({ FRAMEWIRE_BRAIN: "", OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: "sk-e2e", OPENAI_MODEL: "gpt-e2e",
      STT_BASE_URL: "", TTS_BASE_URL: "", DEEPGRAM_API_KEY: "", ASSEMBLYAI_API_KEY: "", CARTESIA_API_KEY: "", ELEVENLABS_API_KEY: "" },
    "chat-only-server.log");
  });
  after(async () => {
    await s?.close();
    await model?.close();
  });

  test("the demo is a working text chat, and the page says why voice is off", async () => {
    await s.page.getByText("has no /audio/transcriptions endpoint", { exact: false }).waitFor({ timeout: WAIT });
    const note = await s.page.getByText("Voice is off", { exact: false }).first().innerText();
    assert.match(note, /Voice is off: speech-to-text by the transcription server at http:\/\/127\.0\.0\.1:\d+\/v1 is configured, but/);
    await s.say("fill in the delivery details");
    // The model's answer: the fake calls reply with "I cannot see …" for
    // the elements of its own test page, which the demo's page lacks.
    await s.answered("I cannot see", WAIT);
    assert.ok(model.requests.length >= 1, "the model was asked");
  });
});

