#!/usr/bin/env bash
# run.sh runs the ui-agent demo's browser tests (demo.test.mjs, inspector.test.mjs,
# agent.test.mjs with a fake OpenAI-compatible model, realtime.test.mjs with
# a fake of the OpenAI Realtime API (fakerealtime/), and voice.test.mjs
# with espeak-ng, offline.test.mjs with no configuration: PocketSphinx and
# espeak-ng, when TAGS has pocketsphinx, and websocket.test.mjs, the same
# voice over Pipecat's WebSocket transport; wsmedia.test.mjs, the page's
# WebSocket media manager in node) from any directory: it installs Debian's
# Chromium and espeak-ng when they are missing (as root),
# builds the page (../build.sh: npm ci and esbuild when needed), then runs
# node's test runner. Screenshots and the server log go to E2E_OUT_DIR
# (default examples/ui-agent/out/e2e).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
browser="${CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$browser" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "e2e: installing chromium with apt-get"
    apt-get install -y -q chromium >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }
  else
    echo "e2e: Chromium is needed at $browser: install Debian's chromium ('sudo apt-get install chromium') or set CHROMIUM" >&2
    exit 1
  fi
fi
# espeak-ng speaks the question of the voice test (which is skipped without it).
if ! command -v espeak-ng >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "e2e: installing espeak-ng with apt-get"
  apt-get install -y -q espeak-ng >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q espeak-ng >/dev/null; } || echo "e2e: espeak-ng could not be installed; the voice test will be skipped" >&2
fi
"$here/../build.sh"
cd "$here/../../.."
exec node --test --test-concurrency=1 --test-reporter=spec "$here/demo.test.mjs" "$here/voice.test.mjs" "$here/agent.test.mjs" "$here/failure.test.mjs" "$here/offline.test.mjs" "$here/websocket.test.mjs" "$here/wsmedia.test.mjs" "$here/inspector.test.mjs" "$here/realtime.test.mjs"
