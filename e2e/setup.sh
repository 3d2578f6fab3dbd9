#!/usr/bin/env bash
# Prepares the browser end-to-end tests, idempotently: Debian Chromium
# (apt-get, when missing and running as root), libopus-dev for the Go
# server's Opus codec, Debian's nats-server for the cluster test, and the
# npm packages from package-lock.json (npm ci, only when the lock file
# changed since the last install).
set -euo pipefail
cd "$(dirname "$0")"

apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q "$@" >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q "$@" >/dev/null; }
}

chromium="${CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "e2e: installing chromium"
    apt_install chromium
  else
    echo "e2e: $chromium is missing: run 'sudo apt-get install -y chromium' or set CHROMIUM" >&2
    exit 1
  fi
fi

if [ "${TAGS-opus nolibopusfile}" != "" ] && ! pkg-config --exists opus 2>/dev/null && [ ! -f /usr/include/opus/opus.h ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "e2e: installing libopus-dev"
    apt_install libopus-dev pkg-config
  else
    echo "e2e: libopus-dev is missing: run 'sudo apt-get install -y libopus-dev pkg-config' or set TAGS=" >&2
    exit 1
  fi
fi

# test/cluster.test.mjs runs Debian's nats-server as a separate process.
nats="${NATS_SERVER:-/usr/sbin/nats-server}"
if [ ! -x "$nats" ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "e2e: installing nats-server"
    apt_install nats-server
  else
    echo "e2e: $nats is missing: run 'sudo apt-get install -y nats-server' or set NATS_SERVER (test/cluster.test.mjs skips without it)" >&2
  fi
fi

stamp=node_modules/.framewire-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "e2e: npm ci"
  npm ci --no-audit --no-fund >/dev/null
  echo "$want" >"$stamp"
fi
