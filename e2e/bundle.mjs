// Bundles the test page twice with esbuild: dist/bundle.js with the current
// clients (client-js 1.13 + small-webrtc-transport 1.10.8) and
// dist/bundle-legacy.js with client-js 1.9 + small-webrtc-transport 1.10.2
// (RTVI 1.3.0), installed under npm aliases and swapped in by esbuild's
// alias option, so the same page code drives both.
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const here = dirname(fileURLToPath(import.meta.url));
const common = {
  entryPoints: [join(here, "src/page.js")],
  bundle: true,
  format: "iife",
  platform: "browser",
  target: "es2020",
  logLevel: "warning",
  nodePaths: [join(here, "node_modules")],
};
await build({ ...common, outfile: join(here, "dist/bundle.js") });
await build({
  ...common,
  outfile: join(here, "dist/bundle-legacy.js"),
  alias: {
    "@pipecat-ai/client-js": "client-js-legacy",
    "@pipecat-ai/small-webrtc-transport": "small-webrtc-transport-legacy",
  },
});
console.log("bundled dist/bundle.js and dist/bundle-legacy.js");
