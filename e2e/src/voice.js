// The voice test's meter, added to the test page (src/page.js) after
// connect(): it measures the real audio energy of the local fake
// microphone and of the bot's remote track with one AudioWorklet each (RMS
// per 10 ms block, stamped with the audio clock), and stamps every RTVI
// message from the bot with performance.now(). Plain script, no imports:
// the Node test adds it with page.addScriptTag and reads window.__voice.
(() => {
  const BLOCK = 480; // samples per block: 10 ms at 48 kHz

  const worklet = `
class EnergyMeter extends AudioWorkletProcessor {
  constructor() { super(); this.sum = 0; this.n = 0; this.t0 = -1; }
  process(inputs) {
    const ch = inputs[0] && inputs[0][0];
    if (this.t0 < 0) this.t0 = currentTime;
    const len = ch ? ch.length : 128;
    if (ch) for (let i = 0; i < len; i++) this.sum += ch[i] * ch[i];
    this.n += len;
    if (this.n >= ${BLOCK}) {
      this.port.postMessage({ t: this.t0, rms: Math.sqrt(this.sum / this.n) });
      this.sum = 0; this.n = 0; this.t0 = -1;
    }
    return true;
  }
}
registerProcessor("energy-meter", EnergyMeter);`;

  const voice = {
    // blocks.mic and blocks.bot: {t: audio clock seconds, rms: 0..1}.
    blocks: { mic: [], bot: [] },
    // events: RTVI messages from the bot, {type, at: performance.now(), data}.
    events: [],
    // stats: the inbound audio's getStats every 100 ms, {at, ...counters}.
    stats: [],
    // offsetMs maps the audio clock to performance.now(): the smallest
    // (least delayed) difference seen between a block's arrival and its
    // audio time.
    offsetMs: Infinity,
    ctx: null,
  };
  window.__voice = voice;

  async function meter(name, track) {
    const src = voice.ctx.createMediaStreamSource(new MediaStream([track]));
    const node = new AudioWorkletNode(voice.ctx, "energy-meter", { numberOfOutputs: 1 });
    node.port.onmessage = (e) => {
      const { t, rms } = e.data;
      voice.offsetMs = Math.min(voice.offsetMs, performance.now() - (t + BLOCK / voice.ctx.sampleRate) * 1000);
      voice.blocks[name].push({ t, rms });
    };
    // A muted path to the destination keeps the node pulled.
    const mute = voice.ctx.createGain();
    mute.gain.value = 0;
    src.connect(node).connect(mute).connect(voice.ctx.destination);
  }

  // start meters the microphone and the bot's track and records RTVI
  // messages; call it once connect() has resolved.
  voice.start = async () => {
    const transport = window.__transport;
    const mic = window.__client.tracks().local.audio;
    const receiver = transport.pc.getReceivers().find((r) => r.track && r.track.kind === "audio");
    if (!mic) throw new Error("no local microphone track (connect with mic: true)");
    if (!receiver) throw new Error("no remote audio track");
    voice.ctx = new AudioContext({ sampleRate: 48000 });
    await voice.ctx.resume();
    await voice.ctx.audioWorklet.addModule(URL.createObjectURL(new Blob([worklet], { type: "text/javascript" })));
    await meter("mic", mic);
    await meter("bot", receiver.track);
    transport.dc.addEventListener("message", (e) => {
      let m;
      try { m = JSON.parse(String(e.data)); } catch { return; }
      if (m && m.label === "rtvi-ai") voice.events.push({ type: m.type, at: performance.now(), data: m.data });
    });
    voice.timer = setInterval(async () => {
      const s = await voice.inboundEnergy();
      if (s) voice.stats.push({ at: performance.now(), ...s });
    }, 100);
    return { sampleRate: voice.ctx.sampleRate, state: voice.ctx.state };
  };

  // toPerf converts an audio-clock time (seconds) to performance.now() ms.
  voice.toPerf = (t) => t * 1000 + voice.offsetMs;

  // inboundEnergy is the receiver's own count of the audio it played out
  // (getStats totalAudioEnergy, audioLevel), a cross-check of the meter.
  voice.inboundEnergy = async () => {
    const stats = await window.__transport.pc.getStats();
    let out = null;
    stats.forEach((s) => {
      if (s.type === "inbound-rtp" && s.kind === "audio") {
        out = {
          totalAudioEnergy: s.totalAudioEnergy, totalSamplesDuration: s.totalSamplesDuration, audioLevel: s.audioLevel,
          packets: s.packetsReceived, jitterBufferDelay: s.jitterBufferDelay, jitterBufferEmittedCount: s.jitterBufferEmittedCount,
          jitterBufferTargetDelay: s.jitterBufferTargetDelay, concealedSamples: s.concealedSamples,
        };
      }
    });
    return out;
  };
})();
