// Golden vectors for the wire package, made by the browser client's own
// protobuf code: @pipecat-ai/websocket-transport's ProtobufFrameSerializer,
// loaded from e2e/node_modules (the version e2e/package-lock.json pins).
// See README.md beside this file for when and how to run it.
//
// It writes, in this directory:
//   client-*.bin   frames the client's serializeAudio and serializeMessage
//                  encode, as the browser sends them;
//   client.json    what went into each (PCM as hex, rate, channels, JSON);
//   server.json    what the client's deserialize reads from each
//                  server-*.bin the Go tests wrote (samples, message), or
//                  the error it throws.

import { createRequire } from "node:module";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const e2e = join(here, "..", "..", "..", "..", "e2e");
const require = createRequire(join(e2e, "package.json"));
const pkg = JSON.parse(
  readFileSync(join(e2e, "node_modules", "@pipecat-ai", "websocket-transport", "package.json"), "utf8"),
);
const { ProtobufFrameSerializer } = require("@pipecat-ai/websocket-transport");
const serializer = new ProtobufFrameSerializer();

// ramp is n samples of a deterministic pattern that reaches both ends of
// the 16-bit range, so that byte order and sign both show.
function ramp(n, seed) {
  const s = new Int16Array(n);
  for (let i = 0; i < n; i++) s[i] = ((i * 2731 + seed * 7919) % 65536) - 32768;
  s[0] = -32768;
  if (n > 1) s[n - 1] = 32767;
  return s;
}

const hex = (u8) => Buffer.from(u8).toString("hex");

const audio = [
  // What the browser sends by default: 512 bytes of 16 kHz mono.
  { name: "client-audio-16k-mono", samples: ramp(256, 1), rate: 16000, channels: 1 },
  // A page that records at 48 kHz; two channels, as a Python client may send.
  { name: "client-audio-48k-stereo", samples: ramp(480, 2), rate: 48000, channels: 2 },
  // Telephony's rate, one sample.
  { name: "client-audio-8k-one", samples: ramp(1, 3), rate: 8000, channels: 1 },
];

const messages = [
  {
    name: "client-message-ready",
    msg: {
      id: "c0ffee00-0000-4000-8000-000000000001",
      label: "rtvi-ai",
      type: "client-ready",
      data: { version: "1.2.0", about: { library: "@pipecat-ai/client-js", library_version: "1.13.1" } },
    },
  },
  {
    name: "client-message-send-text",
    msg: {
      id: "c0ffee00-0000-4000-8000-000000000002",
      label: "rtvi-ai",
      type: "send-text",
      data: { content: "Grüß dich, 世界 👋", options: { run_immediately: true, audio_response: true } },
    },
  },
];

const client = [];
for (const a of audio) {
  const bytes = serializer.serializeAudio(a.samples.buffer, a.rate, a.channels);
  writeFileSync(join(here, a.name + ".bin"), bytes);
  client.push({
    file: a.name + ".bin",
    kind: "audio",
    pcm: hex(new Uint8Array(a.samples.buffer)),
    sample_rate: a.rate,
    num_channels: a.channels,
  });
}
for (const m of messages) {
  const bytes = serializer.serializeMessage(m.msg);
  writeFileSync(join(here, m.name + ".bin"), bytes);
  client.push({ file: m.name + ".bin", kind: "message", data: JSON.stringify(m.msg) });
}
writeFileSync(
  join(here, "client.json"),
  JSON.stringify({ package: pkg.name + "@" + pkg.version, vectors: client }, null, 2) + "\n",
);

// The server's frames, as the Go tests encoded them, read back by the
// client's deserialize: what the browser would play or dispatch.
const server = [];
for (const file of readdirSync(here).filter((f) => /^server-.*\.bin$/.test(f)).sort()) {
  const bytes = readFileSync(join(here, file));
  let got;
  try {
    got = await serializer.deserialize(new Blob([bytes]));
  } catch (e) {
    server.push({ file, kind: "error", error: e.message });
    continue;
  }
  if (got.type === "audio") {
    server.push({ file, kind: "audio", pcm: hex(new Uint8Array(got.audio.buffer)) });
  } else {
    server.push({ file, kind: "message", message: got.message });
  }
}
writeFileSync(
  join(here, "server.json"),
  JSON.stringify({ package: pkg.name + "@" + pkg.version, vectors: server }, null, 2) + "\n",
);
console.log(`${pkg.name}@${pkg.version}: ${client.length} client vectors, ${server.length} server frames read back`);
