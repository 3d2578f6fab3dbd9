// End-to-end test of the UI agent with an OpenAI-compatible model: a test
// page (testpage/, bundled here with esbuild from ../web/node_modules)
// that uses only @pipecat-ai/client-react's own snapshot hook and default
// command handlers, in headless Debian Chromium, against the demo's Go
// server whose model is a local fake OpenAI server (fake-openai.mjs). The
// page streams snapshots; the user's turn goes out as send-text; the fake
// model answers with one reply call that scrolls to and highlights a card,
// fills two inputs and clicks a checkbox; the test reads the page back,
// and the answer arrives as bot-output (a text-only pipeline: not spoken).
// The page is served on the Go server's origin (the browser route below),
// so the signalling is same-origin as in the demo. The turn runs over each
// transport: WebRTC, and Pipecat's WebSocket transport (?transport=websocket).
//
// Run it with examples/ui-agent/e2e/run.sh, or
// `node --test examples/ui-agent/e2e/agent.test.mjs` once the demo bundle
// is built (examples/ui-agent/build.sh).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { example, outDir, WAIT, startServer, launchBrowser } from "./lib.mjs";
import { ANSWER, startFakeOpenAI } from "./fake-openai.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const webModules = join(example, "web", "node_modules");
const { build } = createRequire(join(example, "web", "package.json"))("esbuild");

let fake, server, browser, page, pageBundle;
const agentErrors = [];
const pageErrors = [];

// bundlePage builds testpage/ into a temp dir and returns {html, js}.
async function bundlePage() {
  const dir = mkdtempSync(join(tmpdir(), "ui-agent-testpage-"));
  await build({
    entryPoints: [join(here, "testpage", "main.jsx")],
    bundle: true,
    format: "iife",
    platform: "browser",
    target: ["chrome110"],
    jsx: "automatic",
    nodePaths: [webModules],
    define: { "process.env.NODE_ENV": '"production"' },
    outfile: join(dir, "app.js"),
    logLevel: "warning",
  });
  return { html: readFileSync(join(here, "testpage", "index.html")), js: readFileSync(join(dir, "app.js")) };
}

before(async () => {
  const [bundle, f] = await Promise.all([bundlePage(), startFakeOpenAI()]);
  fake = f;
  server = await startServer(
    // UI_AGENT_VOICE=off: a text-only pipeline, whatever speech services
    // the environment configures.
    { FRAMEWIRE_BRAIN: "", UI_AGENT_VOICE: "off", OPENAI_BASE_URL: fake.baseURL, OPENAI_API_KEY: "sk-e2e", OPENAI_MODEL: "gpt-e2e" },
    "agent-server.log",
  );
  // The test page is fulfilled by the browser's route, not by the server:
  // Chromium's local network access checks then refuse its WebSocket to
  // the loopback server (net::ERR_BLOCKED_BY_LOCAL_NETWORK_ACCESS_CHECKS;
  // fetch and WebRTC are not refused). The demo's own page, served by the
  // server, is on loopback and needs no flag. (The last --disable-features
  // wins: lib.mjs's feature is repeated here.)
  browser = await launchBrowser(["--disable-features=WebRtcHideLocalIpsWithMdns,LocalNetworkAccessChecks,LocalNetworkAccessChecksWebSockets"]);
  pageBundle = bundle;
});

after(async () => {
  try {
    await browser?.close();
  } finally {
    await server?.stop();
    await fake?.close();
  }
});

// openPage opens the test page in a context of its own; it lives under
// /agent-test/ on the Go server's origin.
async function openPage() {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const p = await context.newPage();
  p.on("pageerror", (e) => pageErrors.push(e.message));
  p.on("console", (m) => {
    if (m.type() === "error") pageErrors.push(m.text());
  });
  await context.route("**/agent-test/**", (route) => {
    const js = route.request().url().endsWith("/app.js");
    route.fulfill({
      status: 200,
      contentType: js ? "text/javascript; charset=utf-8" : "text/html; charset=utf-8",
      body: js ? pageBundle.js : pageBundle.html,
    });
  });
  return p;
}

// The same turn over each transport the page offers.
for (const [transport, query, suffix] of [
  ["webrtc", "", ""],
  ["websocket", "?transport=websocket", "-ws"],
]) {
  test(`a model's reply call scrolls, highlights, fills two inputs and checks a box; the answer arrives as bot-output (${transport})`, async () => {
    page = await openPage();
    try {
      await turn();
    } finally {
      agentErrors.push(...((await page.evaluate(() => window.__agent?.errors).catch(() => [])) ?? []));
      await page.evaluate(() => window.__agent?.client?.disconnect()).catch(() => {});
      await page.context().close();
    }
  });

  async function turn() {
    const requests0 = fake.requests.length;
    const replies0 = fake.replies.length;
    await page.goto(new URL(`agent-test/index.html${query}`, server.url).href);
    await page.waitForFunction(() => window.__agent?.ready, null, { timeout: 30000 });
    const ready = await page.evaluate(() => window.__agent.botReady);
    assert.equal(ready.about.brain, "gpt-e2e", "the server runs the OpenAI-compatible client");
    await page.waitForFunction(() => window.__agent.snapshots > 0, null, { timeout: WAIT });
    assert.equal(
      await page.$eval("#target", (el) => el.getBoundingClientRect().top > window.innerHeight),
      true,
      "the target card starts below the fold",
    );
    assert.equal(await page.$eval("#terms", (el) => el.checked), false);

    await page.evaluate(() => window.__agent.client.sendText("fill the form"));
    await page.waitForFunction(
      () =>
        document.getElementById("full-name").value === "Ada Lovelace" &&
        document.getElementById("street").value === "12 St James's Square" &&
        document.getElementById("terms").checked,
      null,
      { timeout: WAIT },
    );
    await page.waitForFunction((answer) => window.__agent.botOutput.some((o) => o.text?.includes(answer)), ANSWER, { timeout: WAIT });
    // scroll_to scrolls smoothly (the handler's default): wait for it to land.
    await page.waitForFunction(
      () => {
        const r = document.getElementById("target").getBoundingClientRect();
        return window.scrollY > 0 && r.top >= 0 && r.bottom <= window.innerHeight && r.height > 0;
      },
      null,
      { timeout: WAIT },
    );

    // The model saw the page: the refs it used came from the <ui_state>.
    const requests = fake.requests.slice(requests0);
    const replies = fake.replies.slice(replies0);
    assert.equal(requests.length, 1, "one inference: the reply call ends the turn without a re-run");
    assert.equal(replies.length, 1, "one user turn reached the model");
    assert.equal(replies[0].args.answer, ANSWER, `the model found every element in:\n${replies[0].state}`);
    const user = requests[0].messages.filter((m) => m.role === "user").pop();
    assert.equal(user.content, "fill the form");

    const st = await page.evaluate(() => {
      const r = document.getElementById("target").getBoundingClientRect();
      const a = window.__agent;
      return {
        inView: r.top >= 0 && r.bottom <= window.innerHeight && r.height > 0,
        scrollY: window.scrollY,
        highlighted: a.highlighted,
        sent: a.sent,
        commands: a.commands.map((c) => c.command),
        output: a.botOutput.filter((o) => o.text?.includes("Done")),
      };
    });
    assert.ok(st.scrollY > 0 && st.inView, `the target card was scrolled into view (scrollY ${st.scrollY})`);
    assert.ok(st.highlighted, "the default highlight handler put ui-highlight on the card");
    assert.ok(st.sent.includes("send-text"), `the turn went out as send-text (sent: ${st.sent})`);
    assert.ok(st.sent.indexOf("ui-snapshot") < st.sent.indexOf("send-text"), "a snapshot went out before the turn");
    for (const c of ["scroll_to", "highlight", "set_input_value", "click"]) {
      assert.ok(st.commands.includes(c), `ui-command ${c} arrived (got ${st.commands})`);
    }
    assert.equal(st.output.length, 1, `one bot-output with the answer (got ${JSON.stringify(st.output)})`);
    assert.equal(st.output[0].spoken, false, "a text-only pipeline does not speak the answer");
    // Let the smooth scroll come to rest before the screenshot.
    await page.waitForFunction(
      () => {
        const still = window.__lastScrollY === window.scrollY;
        window.__lastScrollY = window.scrollY;
        return still;
      },
      null,
      { polling: 150, timeout: WAIT },
    );
    await page.screenshot({ path: join(outDir, `10-agent-form-filled${suffix}.png`) });
  }
}

test("no errors in the agent test pages", () => {
  assert.deepEqual(pageErrors, []);
  assert.deepEqual(agentErrors, []);
});
