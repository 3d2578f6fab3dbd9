// Unit tests of the demo page's WebSocket media manager
// (web/src/wsmedia.js), in node: its two AudioWorklet processors run here
// on a stand-in of the worklet scope, and its bookkeeping of the bot's
// frames without a browser. The browser tests (websocket.test.mjs,
// demo.test.mjs) run it in Chromium, where the microphone reaches the
// capture worklet at 16 kHz already; the resampling path (a browser that
// cannot open the capture context at 16 kHz) is covered only here.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { WORKLETS, WebSocketMediaManager } from "../web/src/wsmedia.js";

// worklets evaluates the processors' code in a scope whose sampleRate is
// rate, and returns a constructor per registered name. Each processor's
// port records what it posts.
function worklets(rate) {
  class AudioWorkletProcessor {
    constructor() {
      this.posted = [];
      this.port = { postMessage: (m) => this.posted.push(m), onmessage: null };
    }
  }
  const procs = {};
  new Function("AudioWorkletProcessor", "registerProcessor", "sampleRate", WORKLETS)(
    AudioWorkletProcessor,
    (name, cls) => (procs[name] = cls),
    rate,
  );
  return procs;
}

// capture runs the capture processor at rate over seconds of a sine of
// freq Hz and amplitude amp in 128-sample blocks, and returns the chunks
// it posted as Int16Arrays.
function capture(rate, seconds, freq, amp) {
  const Capture = worklets(rate)["framewire-capture"];
  const p = new Capture({ processorOptions: { targetRate: 16000, chunkSamples: 256 } });
  const total = Math.round(rate * seconds);
  for (let off = 0; off < total; off += 128) {
    const block = new Float32Array(128);
    for (let i = 0; i < 128; i++) block[i] = amp * Math.sin((2 * Math.PI * freq * (off + i)) / rate);
    p.process([[block]]);
  }
  return p.posted.map((b) => new Int16Array(b));
}

// crossings counts the sign changes of samples.
function crossings(samples) {
  let n = 0;
  for (let i = 1; i < samples.length; i++) if (samples[i - 1] < 0 !== samples[i] < 0) n++;
  return n;
}

describe("the capture worklet", () => {
  test("at 16 kHz it passes the microphone through as 16-bit PCM in 512-byte chunks", () => {
    const chunks = capture(16000, 1, 440, 0.5);
    assert.equal(chunks.length, 62, "16000 samples make 62 whole chunks of 256");
    assert.ok(chunks.every((c) => c.byteLength === 512));
    const all = Int16Array.from(chunks.flatMap((c) => [...c]));
    for (const i of [0, 1, 100, 5000]) {
      assert.ok(Math.abs(all[i] - Math.round(0.5 * 0x7fff * Math.sin((2 * Math.PI * 440 * i) / 16000))) <= 1, `sample ${i}: ${all[i]}`);
    }
  });

  for (const rate of [44100, 48000]) {
    test(`at ${rate} Hz it resamples to 16 kHz: the samples' count, pitch and level are kept`, () => {
      const chunks = capture(rate, 2, 440, 0.5);
      const all = chunks.flatMap((c) => [...c]);
      assert.ok(Math.abs(all.length - 32000) <= 256, `${all.length} samples for 2 s`);
      assert.ok(chunks.every((c) => c.byteLength === 512));
      // 440 Hz crosses zero 880 times a second.
      assert.ok(Math.abs(crossings(all) - 1760) <= 4, `${crossings(all)} zero crossings in 2 s`);
      const peak = Math.max(...all.map(Math.abs));
      assert.ok(peak > 0.49 * 0x7fff && peak <= 0.5 * 0x7fff + 1, `peak ${peak}`);
    });
  }

  test("it clips what is over full scale instead of wrapping", () => {
    const all = capture(16000, 0.1, 100, 1.5).flatMap((c) => [...c]);
    assert.equal(Math.max(...all), 0x7fff);
    assert.equal(Math.min(...all), -0x8000);
  });
});

// player returns a playback processor at 24 kHz with a 60 ms prebuffer,
// and play, which runs n blocks and returns their samples.
function player() {
  const Playback = worklets(24000)["framewire-playback"];
  const p = new Playback({ processorOptions: { prebufferSamples: 1440 } });
  const send = (m) => p.port.onmessage({ data: m });
  const play = (n) => {
    const out = [];
    for (let i = 0; i < n; i++) {
      const ch = new Float32Array(128);
      p.process([], [[ch]]);
      out.push(...ch);
    }
    return out;
  };
  return { p, send, play };
}

const frame = (n, v) => new Float32Array(n).fill(v);

describe("the playback worklet", () => {
  test("it plays queued frames in order, gap-free, once 60 ms are buffered", () => {
    const { p, send, play } = player();
    assert.ok(play(4).every((v) => v === 0), "silence with nothing queued");
    send({ type: "audio", samples: frame(480, 0.1) });
    send({ type: "audio", samples: frame(480, 0.2) });
    send({ type: "audio", samples: frame(480, 0.3) });
    const out = play(12); // 1536 samples: the 1440 queued, then silence
    assert.deepEqual(out.slice(0, 1440), [...frame(480, 0.1), ...frame(480, 0.2), ...frame(480, 0.3)].map((v) => Math.fround(v)));
    assert.ok(out.slice(1440).every((v) => v === 0));
    play(16); // the next report
    const last = p.posted[p.posted.length - 1];
    assert.equal(last.played, 1440);
    assert.equal(last.queued, 0);
    assert.ok(Math.abs(last.energy - (480 * (0.01 + 0.04 + 0.09)) / 24000) < 1e-6, `energy ${last.energy}`);
  });

  test("less than the prebuffer plays once no more data comes", () => {
    const { send, play } = player();
    send({ type: "audio", samples: frame(480, 0.5) });
    const waited = play(8);
    assert.ok(waited.every((v) => v === 0), "it waits for more first");
    const out = play(8);
    assert.equal(out.filter((v) => v === Math.fround(0.5)).length, 480);
  });

  test("clear drops what is queued (the user barged in)", () => {
    const { p, send, play } = player();
    for (let i = 0; i < 10; i++) send({ type: "audio", samples: frame(480, 0.5) });
    play(4);
    send({ type: "clear" });
    assert.ok(play(20).every((v) => v === 0));
    assert.equal(p.posted[p.posted.length - 1].queued, 0);
  });
});

describe("the media manager", () => {
  test("bufferBotAudio counts each bot frame, its energy and its arrival, and holds none before connect", () => {
    const m = new WebSocketMediaManager();
    const pcm = new Int16Array(480).fill(0x4000); // half scale
    assert.equal(m.bufferBotAudio(pcm), pcm);
    m.bufferBotAudio(pcm.buffer);
    const s = m.stats();
    assert.equal(s.frames, 2);
    assert.equal(s.samples, 960);
    assert.ok(Math.abs(s.energy - (2 * 480 * 0.25) / 24000) < 1e-9, `energy ${s.energy}`);
    const log = m.arrivals();
    assert.equal(log.length, 2);
    assert.ok(Math.abs(log[0].rms - 0.5) < 1e-9);
    assert.equal(m._pending.length, 0, "nothing is held for a player before connect");
  });
});
