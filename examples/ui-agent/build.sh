#!/usr/bin/env bash
# build.sh builds the ui-agent demo page (web/dist: app.js, index.html,
# styles.css) that the Go server embeds. It is idempotent and cheap when
# nothing changed, so `make run` calls it every time:
#   - installs Node.js and npm with apt-get when they are missing (as root),
#   - runs `npm ci` when node_modules is missing or older than the lock file,
#   - runs esbuild when the bundle is missing or older than its sources.
# FORCE=1 rebuilds the bundle regardless.
set -euo pipefail
cd "$(dirname "$0")/web"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "build.sh: installing nodejs and npm with apt-get"
    apt-get install -y -q nodejs npm >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q nodejs npm >/dev/null; }
  else
    echo "build.sh: Node.js and npm are needed to build the demo page: install them (e.g. 'sudo apt-get install nodejs npm')" >&2
    exit 1
  fi
fi

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "build.sh: npm ci (examples/ui-agent/web)"
  npm ci --no-audit --no-fund --loglevel=error
fi

stale="${FORCE:-0}"
if [ ! -f dist/app.js ] || [ ! -f dist/index.html ] || [ ! -f dist/styles.css ]; then
  stale=1
elif [ -n "$(find src index.html styles.css build.mjs package-lock.json -newer dist/app.js -print -quit)" ]; then
  stale=1
fi
if [ "$stale" != 0 ]; then
  echo "build.sh: bundling the page with esbuild"
  node build.mjs
fi
