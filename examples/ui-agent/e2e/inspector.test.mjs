// Browser test of the demo's link to the live session inspector: with
// FRAMEWIRE_INSPECTOR=1 the page links to /inspector/, and following the
// link while the page's session is live shows that session: the pipeline
// graph and the waterfall of the turn the user just had. Without the
// variable there is no link. Screenshots go to the output folder.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { outDir, WAIT, startServer, launchBrowser } from "./lib.mjs";

let browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

// openDemo opens the demo served with env and waits for its session.
async function openDemo(env, log) {
  const server = await startServer(env, log);
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(server.url);
  await page.waitForFunction(() => window.__demo?.ready === true, null, { timeout: WAIT });
  return { server, page };
}

test("FRAMEWIRE_INSPECTOR=1: the page links to the inspector, which shows the live session and its turn", async () => {
  const { server, page } = await openDemo({ FRAMEWIRE_INSPECTOR: "1", UI_AGENT_VOICE: "off" }, "inspector-server.log");
  try {
    const link = page.locator("#inspector-link");
    await link.waitFor({ timeout: WAIT });
    assert.equal(await link.getAttribute("href"), "/inspector/");
    // The link is the operator's, not part of the page the agent drives.
    const snapshot = await page.evaluate(() => JSON.stringify(window.__demo.snapshot()));
    assert.ok(!snapshot.includes("Inspector"), "the inspector link is in the accessibility snapshot");

    await page.fill("#say", "Where is the iPhone 17?");
    await page.press("#say", "Enter");
    await page.waitForFunction(
      () => [...document.querySelectorAll('[data-testid=conversation] li[data-role="assistant"] .bubble')].some((b) => b.textContent.includes("iPhone 17")),
      null,
      { timeout: WAIT },
    );

    const [inspector] = await Promise.all([page.context().waitForEvent("page", { timeout: WAIT }), link.click()]);
    await inspector.setViewportSize({ width: 1100, height: 720 });
    await inspector.waitForSelector(".node", { timeout: WAIT });
    await inspector.waitForSelector('.row[data-span^="chat"] .bar', { timeout: WAIT });
    const nodes = await inspector.$$eval(".node b", (els) => els.map((e) => e.textContent));
    assert.ok(nodes.some((n) => /^RTVI/i.test(n)), `the graph shows no RTVI processor: ${nodes}`);
    assert.ok(nodes.length >= 5, `the graph shows ${nodes.length} processors: ${nodes}`);
    await inspector.screenshot({ path: join(outDir, "inspector-from-demo.png"), fullPage: true });
  } finally {
    await page.close();
    await server.stop();
  }
});

test("without FRAMEWIRE_INSPECTOR the page has no inspector link", async () => {
  const { server, page } = await openDemo({ FRAMEWIRE_INSPECTOR: "", UI_AGENT_VOICE: "off" }, "no-inspector-server.log");
  try {
    await page.waitForSelector("#brain-label", { timeout: WAIT }); // the config has arrived
    assert.equal(await page.locator("#inspector-link").count(), 0);
  } finally {
    await page.close();
    await server.stop();
  }
});
