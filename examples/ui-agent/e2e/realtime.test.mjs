// End-to-end test of the ui-agent demo in Realtime mode: the real page in
// headless Debian Chromium against the demo's Go server whose brain is an
// OpenAI Realtime speech-to-speech model (OPENAI_REALTIME_MODEL), here a
// local fake of the Realtime API's WebSocket (fakerealtime/, a Go program
// that follows the API reference and knows nothing of framewire). The page
// must show the greeting's text and the answer to a typed question, which
// the model speaks (bot-output, spoken, after the output transport).
//
// Run it with examples/ui-agent/e2e/run.sh, or
// `node --test examples/ui-agent/e2e/realtime.test.mjs` once the demo
// bundle is built (examples/ui-agent/build.sh).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { createWriteStream, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { outDir, repo, WAIT, startServer, launchBrowser, unconfigured } from "./lib.mjs";

let fake, server, browser, page;
const pageErrors = [];
const fakeLog = [];

// startFake builds and starts fakerealtime; it resolves to {baseURL, stop}.
async function startFake() {
  const bin = join(mkdtempSync(join(tmpdir(), "fakerealtime-")), "fakerealtime");
  execFileSync("go", ["build", "-o", bin, "./examples/ui-agent/e2e/fakerealtime"], { cwd: repo, stdio: "inherit" });
  const proc = spawn(bin, [], { stdio: ["ignore", "pipe", "pipe"] });
  const log = createWriteStream(join(outDir, "fakerealtime.log"));
  const exited = new Promise((res) => proc.once("exit", res));
  proc.stderr.pipe(log);
  const baseURL = await new Promise((res, rej) => {
    let buf = "";
    const timer = setTimeout(() => rej(new Error(`fakerealtime did not start:\n${buf}`)), 60000);
    proc.stdout.on("data", (d) => {
      log.write(d);
      buf += d;
      fakeLog.push(String(d));
      const m = buf.match(/listening on (http:\/\/127\.0\.0\.1:\d+\/v1)/);
      if (m) {
        clearTimeout(timer);
        res(m[1]);
      }
    });
    proc.once("exit", (code) => rej(new Error(`fakerealtime exited (${code}):\n${buf}`)));
  });
  const stop = async () => {
    if (proc.exitCode !== null) return;
    proc.kill("SIGINT");
    const killer = setTimeout(() => proc.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(killer);
  };
  return { baseURL, stop };
}

before(async () => {
  fake = await startFake();
  server = await startServer(
    {
      ...unconfigured,
      FRAMEWIRE_BRAIN: "",
      OPENAI_API_KEY: "sk-e2e",
      OPENAI_BASE_URL: fake.baseURL,
      OPENAI_REALTIME_MODEL: "gpt-realtime-e2e",
    },
    "realtime-server.log",
  );
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on("pageerror", (e) => pageErrors.push(e.message));
  page.on("console", (m) => {
    if (m.type() === "error") pageErrors.push(m.text());
  });
});

after(async () => {
  try {
    await page?.evaluate(() => window.__demo?.client?.disconnect()).catch(() => {});
    await browser?.close();
  } finally {
    await server?.stop();
    await fake?.stop();
  }
});

// assistantTexts returns the text of every assistant message on the page.
function assistantTexts() {
  return page.evaluate(() =>
    [...document.querySelectorAll('[data-testid=conversation] li[data-role="assistant"] .bubble')].map((b) => b.textContent),
  );
}

// waitForAnswer waits until an assistant message on the page contains text.
async function waitForAnswer(text) {
  try {
    await page.waitForFunction(
      (text) =>
        [...document.querySelectorAll('[data-testid=conversation] li[data-role="assistant"] .bubble')].some((b) =>
          b.textContent.includes(text),
        ),
      text,
      { timeout: WAIT },
    );
  } catch (e) {
    throw new Error(`no assistant message with ${JSON.stringify(text)} on the page; it shows ${JSON.stringify(await assistantTexts())}`, { cause: e });
  }
}

test("Realtime mode: the page shows the greeting's text", async () => {
  await page.goto(server.url);
  await page.waitForFunction(() => window.__demo?.ready, null, { timeout: 30000 });
  const ready = await page.evaluate(() => window.__demo.botReady);
  assert.equal(ready.about.brain, "gpt-realtime-e2e (speech to speech)", "the server runs the Realtime brain");
  await waitForAnswer("Hi! I can see this page.");
  await waitForAnswer("or tell me your name and email for the form.");
  await page.screenshot({ path: join(outDir, "20-realtime-greeting.png") });
});

test("Realtime mode: the page shows the spoken answer to a typed question", async () => {
  await page.waitForFunction(() => window.__demo.snapshots > 0, null, { timeout: WAIT });
  await page.fill("#say", "where is the iPhone 17?");
  await page.press("#say", "Enter");
  await waitForAnswer("You said: where is the iPhone 17?");
  await page.screenshot({ path: join(outDir, "21-realtime-answer.png") });
});

test("Realtime mode: no page errors and no refused response.create", async () => {
  assert.deepEqual(pageErrors, []);
  assert.deepEqual(await page.evaluate(() => window.__demo.errors), []);
  // The fake counts the response.create it refused (one while a response
  // ran) and says so when it stops.
  await page.evaluate(() => window.__demo.client.disconnect());
  await fake.stop();
  const summary = fakeLog.join("").match(/fakerealtime: (\d+) refused response.create/);
  assert.ok(summary, `the fake's summary is missing:\n${fakeLog.join("")}`);
  assert.equal(summary[1], "0", "the server asked for a response while one was running");
});
