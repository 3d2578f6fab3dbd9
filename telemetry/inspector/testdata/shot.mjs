// Opens the inspector in headless Chromium, waits for the pipeline graph
// and a turn's waterfall, and saves a screenshot. Usage:
//   node shot.mjs <url> <screenshot.png>   (run with NODE_PATH=e2e/node_modules)
import { createRequire } from "node:module";
const require = createRequire(process.env.NODE_PATH + "/");
const { chromium } = require("playwright-core");
const [url, out] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
try {
  const page = await (await browser.newContext({ viewport: { width: 1100, height: 720 } })).newPage();
  await page.goto(url);
  await page.waitForSelector(".node", { timeout: 10000 });
  await page.waitForSelector('.row[data-span^="chat"] .bar', { timeout: 10000 });
  const nodes = await page.$$eval(".node b", (els) => els.map((e) => e.textContent));
  await page.screenshot({ path: out, fullPage: true });
  console.log(JSON.stringify({ nodes }));
} finally {
  await browser.close();
}
