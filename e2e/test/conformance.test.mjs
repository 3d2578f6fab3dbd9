// The same scenarios against examples/conformance, the bot fixed by
// docs/protocol.md §10, once it exists (or any bot named by
// E2E_CONFORMANCE_CMD, which must take -addr). The page is served from
// another origin, so the bot's CORS answers are exercised too.
import { describe, before, after } from "node:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Server, Target, goBuild, launchBrowser, servePage, repo } from "../lib/harness.mjs";
import { conformanceScenarios, jobGroupScenarios } from "../lib/scenarios.mjs";

const haveBot = process.env.E2E_CONFORMANCE_CMD || existsSync(join(repo, "examples/conformance"));

describe("examples/conformance", { skip: haveBot ? false : "examples/conformance does not exist yet" }, () => {
  let server, browser, page, target;

  before(async () => {
    let cmd, args;
    if (process.env.E2E_CONFORMANCE_CMD) {
      [cmd, ...args] = process.env.E2E_CONFORMANCE_CMD.split(" ");
    } else {
      cmd = goBuild("./examples/conformance", "conformance");
      args = [];
    }
    server = new Server({ cmd, args, addrFlag: "-addr" });
    await server.start();
    page = await servePage();
    browser = await launchBrowser();
    target = new Target(browser, page.url, server.url);
  });

  after(async () => {
    if (browser) await browser.close();
    if (page) await page.close();
    if (server) await server.stop();
  });

  conformanceScenarios(() => target);
  jobGroupScenarios(() => target);
});
