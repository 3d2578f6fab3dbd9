// Client-side function calls with the real client-js in headless Chromium:
// the page registers handlers with registerFunctionCallHandler, the e2e
// server's scripted model (e2eserver -functions) calls them, and the
// server reports every request the model gets ("llm-request" events with
// their tool messages). Each call must settle once: the page's result
// reaches the model's next request once, a second answer changes nothing,
// and an answer after the call's timeout or after an interruption is
// dropped.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { Server, Target, goBuild, launchBrowser, e2eDir, closePage, until } from "../lib/harness.mjs";

let server, browser, target;

before(async () => {
  const bin = goBuild("./cmd/e2eserver", "e2eserver");
  server = new Server({ cmd: bin, args: ["-addr", "127.0.0.1:0", "-static", e2eDir, "-functions"] });
  await server.start();
  browser = await launchBrowser();
  target = new Target(browser, server.url, server.url);
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.stop();
});

// open connects a page and returns it with the server's id of its session.
// The tests run one at a time, so the session is the one that starts
// during the connect.
async function open(legacy = false) {
  const known = new Set(server.events.filter((e) => e.event === "session").map((e) => e.session));
  const page = await target.open({ legacy });
  await target.connect(page);
  const ev = await server.waitFor((e) => e.event === "session" && !known.has(e.session), 5000, "the page's session");
  return { page, session: ev.session };
}

// raw returns the parsed data-channel messages of type the page received.
async function raw(page, type) {
  const all = await page.evaluate(() => window.__e2e.raw);
  return all.map((m) => { try { return JSON.parse(m); } catch { return null; } }).filter((m) => m && m.type === type);
}

async function waitRaw(page, type, pred = () => true, timeout = 10000) {
  let found;
  const deadline = Date.now() + timeout;
  for (;;) {
    found = (await raw(page, type)).find(pred);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no ${type} message within ${timeout} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const request = (session, pred) => (e) => e.event === "llm-request" && e.session === session && pred(e);
const toolsFor = (ev, id) => ev.tools.filter((t) => t.id === id);

function registerPageState(page) {
  return page.evaluate(() => {
    window.__fnCalls = [];
    window.__client.registerFunctionCallHandler("get_page_state", async (p) => {
      window.__fnCalls.push(p);
      return { title: document.title, field: p.arguments.field, value: "Ada" };
    });
  });
}

describe("client-side function calls", () => {
  for (const legacy of [false, true]) {
    const which = legacy ? "client-js 1.9" : "client-js 1.13";
    it(`${which}: the page's result reaches the model's next request once; a second answer changes nothing`, async () => {
      const { page, session } = await open(legacy);
      await registerPageState(page);
      await page.evaluate(() => window.__client.sendText('call get_page_state {"field":"name"}'));

      // The client is told the function's name and arguments (at the
      // observer's default report level) and runs the handler once.
      const inProgress = await waitRaw(page, "llm-function-call-in-progress");
      assert.equal(inProgress.data.function_name, "get_page_state");
      assert.deepEqual(inProgress.data.arguments, { field: "name" });
      const id = inProgress.data.tool_call_id;
      assert.ok(id);

      const next = await server.waitFor(request(session, (e) => e.last_role === "tool"), 10000, "the model's request after the call");
      assert.equal(toolsFor(next, id).length, 1, JSON.stringify(next.tools));
      assert.deepEqual(JSON.parse(toolsFor(next, id)[0].content), { title: "framewire e2e", field: "name", value: "Ada" });
      const calls = await page.evaluate(() => window.__fnCalls);
      assert.equal(calls.length, 1);
      assert.deepEqual(calls[0].arguments, { field: "name" });
      assert.equal(calls[0].functionName, "get_page_state");

      // The answer the model gave with the result reaches the page.
      await until(page, () => window.__e2e.raw.some((m) => m.includes("tool said:")), undefined, 5000);
      const stopped = await waitRaw(page, "llm-function-call-stopped", (m) => m.data.tool_call_id === id);
      assert.equal(stopped.data.cancelled, false);
      assert.equal(stopped.data.function_name, "get_page_state");

      // A second answer for the same call, then another turn: the model
      // still sees the first result, once, and was asked once after it.
      await page.evaluate((id) => window.rtvi("llm-function-call-result",
        { function_name: "get_page_state", tool_call_id: id, arguments: {}, result: { value: "Eve" } }), id);
      await page.evaluate(() => window.__client.sendText("hello"));
      const later = await server.waitFor(request(session, (e) => e.last === "hello"), 10000, "the request for the next turn");
      assert.deepEqual(toolsFor(later, id), toolsFor(next, id));
      const afterTool = server.events.filter(request(session, (e) => e.last_role === "tool"));
      assert.equal(afterTool.length, 1, "one inference ran on the call's result");
      assert.equal((await raw(page, "llm-function-call-stopped")).filter((m) => m.data.tool_call_id === id).length, 1);
      await closePage(page);
    });
  }

  it("a page that answers after the call's timeout: the model is told it timed out, the late answer is dropped", async () => {
    const { page, session } = await open();
    await page.evaluate(() => {
      window.__slowDone = false;
      window.__client.registerFunctionCallHandler("slow_client", async () => {
        await new Promise((r) => setTimeout(r, 2000)); // the server waits 1 s
        window.__slowDone = true;
        return { late: true };
      });
    });
    await page.evaluate(() => window.__client.sendText("call slow_client"));
    const inProgress = await waitRaw(page, "llm-function-call-in-progress");
    const id = inProgress.data.tool_call_id;
    const next = await server.waitFor(request(session, (e) => e.last_role === "tool"), 10000, "the request after the timeout");
    assert.equal(toolsFor(next, id).length, 1);
    assert.match(toolsFor(next, id)[0].content, /did not answer within 1s/);

    await until(page, () => window.__slowDone, undefined, 5000);
    await new Promise((r) => setTimeout(r, 300)); // the late answer's way to the server
    await page.evaluate(() => window.__client.sendText("after the timeout"));
    const later = await server.waitFor(request(session, (e) => e.last === "after the timeout"), 10000, "the next turn's request");
    assert.deepEqual(toolsFor(later, id), toolsFor(next, id), "the late answer did not reach the model");
    assert.equal(server.events.filter(request(session, (e) => e.last_role === "tool")).length, 1);
    await closePage(page);
  });

  it("an interruption cancels the call: the page is told, and its late answer is dropped", async () => {
    const { page, session } = await open();
    await page.evaluate(() => {
      window.__slowDone = false;
      window.__client.registerFunctionCallHandler("slow_client", async () => {
        await new Promise((r) => setTimeout(r, 700)); // within the server's 1 s
        window.__slowDone = true;
        return { late: true };
      });
    });
    await page.evaluate(() => window.__client.sendText("call slow_client"));
    const id = (await waitRaw(page, "llm-function-call-in-progress")).data.tool_call_id;
    // send-text interrupts the bot by default.
    await page.evaluate(() => window.__client.sendText("never mind"));
    const stopped = await waitRaw(page, "llm-function-call-stopped", (m) => m.data.tool_call_id === id);
    assert.equal(stopped.data.cancelled, true);

    await until(page, () => window.__slowDone, undefined, 5000);
    await new Promise((r) => setTimeout(r, 300));
    await page.evaluate(() => window.__client.sendText("later"));
    const later = await server.waitFor(request(session, (e) => e.last === "later"), 10000, "the next turn's request");
    assert.deepEqual(toolsFor(later, id), [{ id, content: "CANCELLED" }]);
    assert.equal(server.events.filter(request(session, (e) => e.last_role === "tool")).length, 0,
      "no inference ran on a result");
    await closePage(page);
  });
});
