// Builds the demo page into dist/: app.js (one IIFE bundle of the page and
// the real @pipecat-ai packages), index.html and styles.css. The Go server
// embeds dist/ (examples/ui-agent/assets.go). Run by ../build.sh.
import { build } from "esbuild";
import { copyFile, mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "dist");
await mkdir(out, { recursive: true });

await build({
  entryPoints: [join(here, "src", "main.jsx")],
  bundle: true,
  format: "iife",
  platform: "browser",
  target: ["chrome110", "firefox110", "safari16"],
  jsx: "automatic",
  minify: true,
  sourcemap: false,
  legalComments: "none",
  define: { "process.env.NODE_ENV": '"production"' },
  outfile: join(out, "app.js"),
  logLevel: "warning",
});
await copyFile(join(here, "index.html"), join(out, "index.html"));
await copyFile(join(here, "styles.css"), join(out, "styles.css"));
console.log(`built ${out}`);
