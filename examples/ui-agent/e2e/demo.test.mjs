// End-to-end test of the ui-agent demo: the real page (client-js,
// small-webrtc-transport or websocket-transport, client-react) in headless
// Debian Chromium, driven by playwright-core, against the real Go server
// with the offline demo brain. The text scenarios run over each transport
// the page offers: WebRTC (the default) and Pipecat's WebSocket transport
// (?transport=websocket). Each step saves a screenshot under the output
// folder (E2E_OUT_DIR, default examples/ui-agent/out/e2e; the WebSocket
// run's names start with ws-). TAGS sets the Go build tags of the server
// (e.g. "opus nolibopusfile"); CHROMIUM the browser.
//
// Run it with examples/ui-agent/e2e/run.sh (which builds what it needs),
// or `node --test examples/ui-agent/e2e/` once the bundle is built.
import { test, before, after, describe } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { outDir, WAIT, startServer, launchBrowser } from "./lib.mjs";

let server, url, browser, page;
const pageErrors = [];
// The transport the current describe block's page runs on, and the
// prefix of its screenshots.
let prefix = "";

// shot saves a screenshot once smooth scrolling has come to rest (a
// screenshot mid-scroll shows the sticky header out of place).
async function shot(name) {
  await page.waitForFunction(
    () => {
      const y = window.scrollY;
      const still = window.__lastScrollY === y;
      window.__lastScrollY = y;
      return still;
    },
    null,
    { polling: 150, timeout: WAIT },
  );
  await page.screenshot({ path: join(outDir, `${prefix}${name}.png`) });
}

before(async () => {
  // The text chat: with the offline speech built in (the pocketsphinx
  // tag) the demo would have voice on with no configuration, so this
  // test of typing turns it off (offline.test.mjs covers voice).
  server = await startServer({ UI_AGENT_VOICE: "off" }, "server.log");
  url = server.url;
  browser = await launchBrowser();
});

after(async () => {
  try {
    await browser?.close();
  } finally {
    await server?.stop();
  }
});

// openPage opens a page of its own for a transport's scenarios; the
// page's errors are collected for the last test.
async function openPage(name) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const p = await context.newPage();
  p.on("pageerror", (e) => pageErrors.push(`${name}: ${e.message}`));
  p.on("console", (m) => {
    if (m.type() === "error") pageErrors.push(`${name}: ${m.text()}`);
  });
  return p;
}

async function closePage(p) {
  await p?.evaluate(() => window.__demo?.client?.disconnect()).catch(() => {});
  await p?.context().close();
}

// say types text into the message box and sends it with Enter.
async function say(text) {
  await page.fill("#say", text);
  await page.press("#say", "Enter");
}

// lastAnswer waits until the newest agent message contains every string.
async function lastAnswer(...parts) {
  await page.waitForFunction(
    (parts) => {
      const entries = document.querySelectorAll('[data-testid=conversation] li[data-role="assistant"]');
      const last = entries[entries.length - 1];
      const text = last?.querySelector(".bubble")?.textContent ?? "";
      return parts.every((p) => text.includes(p));
    },
    parts,
    { timeout: WAIT },
  );
  return page.evaluate(() => {
    const entries = document.querySelectorAll('[data-testid=conversation] li[data-role="assistant"]');
    return entries[entries.length - 1].innerText;
  });
}

function inViewport(selector) {
  return page.waitForFunction(
    (sel) => {
      const r = document.querySelector(sel)?.getBoundingClientRect();
      return r && r.top >= 0 && r.bottom <= window.innerHeight && r.height > 0;
    },
    selector,
    { timeout: WAIT },
  );
}

const transports = [
  { name: "webrtc", query: "/", prefix: "" },
  { name: "websocket", query: "/?transport=websocket", prefix: "ws-" },
];

for (const transport of transports) {
  describe(`over ${transport.name}`, () => {
    before(async () => {
      prefix = transport.prefix;
      page = await openPage(transport.name);
    });
    after(async () => {
      await closePage(page);
    });

    test("the demo connects, names its brain and greets", async () => {
      const sockets = [];
      page.on("websocket", (ws) => sockets.push(ws.url()));
      await page.goto(new URL(transport.query, url).href);
      await page.waitForFunction(() => window.__demo?.ready, null, { timeout: 30000 });
      const ready = await page.evaluate(() => window.__demo.botReady);
      assert.equal(ready.version, "2.1.0");
      assert.equal(ready.about.brain, "offline demo brain");
      assert.equal(await page.evaluate(() => window.__demo.transportKind), transport.name);
      if (transport.name === "websocket") {
        // startBotAndConnect posted to /ws/connect and opened the socket it named.
        assert.equal(sockets.length, 1, `sockets: ${sockets}`);
        assert.match(sockets[0], new RegExp(`^ws://${new URL(url).host}/ws/ws\\?session=[0-9a-f-]{36}$`));
      } else {
        assert.deepEqual(sockets, [], "WebRTC opens no WebSocket");
      }
      await page.getByText("Offline demo brain", { exact: true }).waitFor({ timeout: WAIT });
      await lastAnswer("Hi! I can see this page.");
      await page.waitForFunction(() => window.__demo.snapshots > 0, null, { timeout: WAIT });
      await shot("01-connected");
    });

    test("pointing: where is the iPhone 17?", async () => {
      const card = 'li[aria-label="iPhone 17"]';
      assert.equal(await page.$eval(card, (el) => el.getBoundingClientRect().top > window.innerHeight), true, "the card starts below the fold");
      await say("where is the iPhone 17?");
      await page.waitForSelector(`${card}.ui-highlight, ${card}.ui-highlight-all`, { timeout: WAIT });
      await inViewport(card);
      const answer = await lastAnswer("The iPhone 17 is in row", "I scrolled down to it");
      assert.match(answer, /scrolled to “iPhone 17”/);
      assert.match(answer, /highlighted “iPhone 17”/);
      await shot("02-pointing");

      await say("add the iPhone 17 to my cart");
      await lastAnswer("Added the iPhone 17 to your cart.");
      await page.getByText("Cart: 1 item", { exact: true }).waitFor({ timeout: WAIT });
    });

    test("pointing at several phones, then back to the top", async () => {
      await say("Which phones are from Google?");
      await page.waitForFunction(
        () => ["Pixel 10", "Pixel 9a", "Pixel 10 Pro"].every((n) => document.querySelector(`li[aria-label="${n}"]`)?.classList.contains("ui-highlight-all")),
        null,
        { timeout: WAIT },
      );
      await lastAnswer("Google makes 3 of these phones: the Pixel 10, the Pixel 9a and the Pixel 10 Pro.");
      await shot("02b-several-phones");

      await say("scroll back to the top");
      await lastAnswer("Back at the top.");
      await inViewport("#phones-title");
    });

    test("form fill by text, read back and submit", async () => {
      await say("My name is Ada Lovelace and my email is ada@example.com");
      await page.waitForFunction(
        () =>
          document.getElementById("first-name").value === "Ada" &&
          document.getElementById("last-name").value === "Lovelace" &&
          document.getElementById("email").value === "ada@example.com",
        null,
        { timeout: WAIT },
      );
      await lastAnswer("Got it: first name Ada, last name Lovelace and email ada@example.com.");
      await inViewport("#first-name");
      await shot("03-form-filled");

      // The next snapshot carries the values; the read-back comes from it.
      await page.waitForFunction(() => window.__demo.snapshots > 0, null, { timeout: WAIT });
      await say("What have I entered?");
      await lastAnswer("You've entered first name Ada, last name Lovelace and email ada@example.com");

      await say("Submit the application");
      await page.waitForFunction(() => document.querySelector(".form-status")?.textContent.includes("Application sent. Thanks, Ada!"), null, {
        timeout: WAIT,
      });
      await lastAnswer("Done, I submitted your application.");
      await shot("04-form-submitted");
    });

    test("deixis: select a paragraph and ask to explain this", async () => {
      await page.locator("#essay-p2").scrollIntoViewIfNeeded();
      await page.click("#essay-p2", { clickCount: 3 }); // a user's triple click selects the paragraph
      const selected = await page.evaluate(() => getSelection().toString());
      assert.match(selected, /^In the lab, octopuses unscrew jar lids/);
      await page.getByText("Selected:").waitFor({ timeout: WAIT });
      await say("explain this");
      await lastAnswer("This part is about solving problems.", "unscrew jar lids");
      await shot("05-explain-this");

      await say("Where does it talk about camouflage?");
      await lastAnswer('It talks about that in the part called "Masters of disguise".');
      await page.waitForFunction(() => getSelection().toString().startsWith("Camouflage is where"), null, { timeout: WAIT });
      await inViewport("#essay-p3");
      await shot("06-where-does-it-talk-about");
    });

    test("task group: start research, watch progress, cancel it", async () => {
      await say("Compare prices for the iPhone 17");
      const card = 'li.task-card[aria-label="Research (simulated): prices for the iPhone 17"]';
      await page.waitForSelector(`${card}.status-running`, { timeout: WAIT });
      await lastAnswer("On it: three workers are looking into prices for the iPhone 17.");
      assert.equal(await page.$$eval(`${card} .worker`, (rows) => rows.length), 3);
      await page.waitForFunction((card) => document.querySelector(`${card} .worker-note`)?.textContent.includes("…"), card, { timeout: WAIT });
      await shot("07-task-running");

      await page.click(`${card} button[aria-label^="Cancel"]`);
      await page.waitForSelector(`${card}.status-cancelled`, { timeout: WAIT });
      const statuses = await page.$$eval(`${card} .worker .pill`, (pills) => pills.map((p) => p.textContent));
      assert.deepEqual(statuses, ["cancelled", "cancelled", "cancelled"]);
      await shot("08-task-cancelled");
    });
  });
}

// The microphone path of the page (its own media manager): with a
// speech-to-text service configured (here the config is stubbed, the
// server has none), the mic button asks for the microphone, puts the
// track on the audio transceiver, and audio flows to the server.
test("microphone: pressing the mic button sends audio", async () => {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const mic = await ctx.newPage();
  mic.on("pageerror", (e) => pageErrors.push(e.message));
  await mic.route("**/api/config", async (route) => {
    const res = await route.fetch();
    const cfg = await res.json();
    cfg.voice = { stt: true, tts: false, note: "Voice is on (stubbed by the test)." };
    await route.fulfill({ response: res, json: cfg });
  });
  try {
    await mic.goto(url);
    await mic.waitForFunction(() => window.__demo?.ready, null, { timeout: 30000 });
    const sent = () =>
      mic.evaluate(async () => {
        const stats = await window.__demo.transport.pc.getStats();
        let bytes = 0;
        stats.forEach((r) => {
          if (r.type === "outbound-rtp" && r.kind === "audio") bytes += r.bytesSent;
        });
        return bytes;
      });
    assert.equal(await sent(), 0, "no audio before the microphone is on");
    await mic.getByRole("button", { name: "Turn microphone on" }).click();
    await mic.getByRole("button", { name: "Turn microphone off" }).waitFor({ timeout: WAIT });
    const before = await sent();
    await mic.waitForFunction(
      async (before) => {
        const stats = await window.__demo.transport.pc.getStats();
        let bytes = 0;
        stats.forEach((r) => {
          if (r.type === "outbound-rtp" && r.kind === "audio") bytes += r.bytesSent;
        });
        return bytes > before + 2000;
      },
      before,
      { timeout: WAIT, polling: 250 },
    );
    await mic.screenshot({ path: join(outDir, "09-microphone-on.png") });
    await mic.getByRole("button", { name: "Turn microphone off" }).click();
    await mic.getByRole("button", { name: "Turn microphone on" }).waitFor({ timeout: WAIT });
  } finally {
    await mic.evaluate(() => window.__demo?.client?.disconnect()).catch(() => {});
    await ctx.close();
  }
});

test("no errors in the page", () => {
  assert.deepEqual(pageErrors, []);
});
