// WebSocketMediaManager is the page's media manager for Pipecat's
// WebSocketTransport (@pipecat-ai/websocket-transport 1.7).
//
// The transport hands raw audio both ways to its media manager: it calls
// the callback set with setUserAudioCallback for each chunk of the user's
// audio it should send (16-bit mono PCM at its recorderSampleRate, 16 kHz
// by default), and bufferBotAudio with each frame the server sent (16-bit
// mono PCM at its playerSampleRate, 24 kHz by default; the frame's own
// rate is not read). Its default manager, DailyMediaManager, loads
// daily-js from a CDN when the mic starts, which hangs offline; this one
// uses only Web Audio:
//
//   - the microphone (asked for only when the user presses the mic
//     button, as on the WebRTC page) goes through an AudioWorklet that
//     resamples it to 16 kHz and hands over 512-byte chunks (256 samples,
//     16 ms), the size the transport's own recorder sends;
//   - the bot's frames go into a playback worklet's queue, played gap-free
//     at 24 kHz after a short jitter buffer, through an AnalyserNode;
//     stats() reports what arrived and what was played (energy, frames),
//     so the page and its tests can see the bot's audio.
//
// The transport does nothing when the user barges in (the server only
// stops sending); userStartedSpeaking() drops what is still queued, and
// the page calls it when the server says the user started speaking.

// The worklets' code, loaded from a Blob URL: the page is one bundle
// (exported for e2e/wsmedia.test.mjs).
export const WORKLETS = `
// Mic capture: resamples the input (the context's rate, sampleRate) to
// the target rate by linear interpolation and posts Int16 chunks.
class FramewireCapture extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const o = options.processorOptions || {};
    this.target = o.targetRate || 16000;
    this.chunk = o.chunkSamples || 256;
    this.step = sampleRate / this.target; // input samples per output sample
    this.pos = 0; // position of the next output sample, in input samples since prev
    this.prev = 0; // the last input sample of the previous block
    this.buf = new Int16Array(this.chunk);
    this.n = 0;
  }
  process(inputs) {
    const input = inputs[0] && inputs[0][0];
    if (!input) return true;
    const len = input.length;
    // Output samples at positions pos, pos+step, ... in [-1, len-1], where
    // -1 is prev (the previous block's last sample).
    while (this.pos <= len - 1) {
      const i = Math.floor(this.pos);
      const f = this.pos - i;
      const a = i < 0 ? this.prev : input[i];
      const b = i + 1 < 0 ? this.prev : input[Math.min(i + 1, len - 1)];
      const v = Math.max(-1, Math.min(1, a + (b - a) * f));
      this.buf[this.n++] = v < 0 ? v * 0x8000 : v * 0x7fff;
      if (this.n === this.chunk) {
        const out = this.buf;
        this.port.postMessage(out.buffer, [out.buffer]);
        this.buf = new Int16Array(this.chunk);
        this.n = 0;
      }
      this.pos += this.step;
    }
    this.pos -= len;
    this.prev = input[len - 1];
    return true;
  }
}
registerProcessor("framewire-capture", FramewireCapture);

// Bot playback: a queue of Float32 chunks played in order; silence when
// it is empty. After a gap, playing waits for prebuffer samples (or for
// the data to stop coming) so network jitter does not cut the audio.
class FramewirePlayback extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const o = options.processorOptions || {};
    this.prebuffer = o.prebufferSamples || 1440;
    this.queue = [];
    this.offset = 0; // into queue[0]
    this.queued = 0;
    this.playing = false;
    this.idleBlocks = 0; // blocks since the last data
    this.energy = 0; // sum of squares of what was played
    this.played = 0; // samples played (not silence)
    this.gaps = 0; // times the queue ran dry while playing
    this.blocks = 0;
    this.port.onmessage = (e) => {
      const m = e.data;
      if (m.type === "audio") {
        this.queue.push(m.samples);
        this.queued += m.samples.length;
        this.idleBlocks = 0;
      } else if (m.type === "clear") {
        this.queue = [];
        this.offset = 0;
        this.queued = 0;
        this.playing = false;
      }
    };
  }
  process(_inputs, outputs) {
    const out = outputs[0][0];
    this.idleBlocks++;
    if (!this.playing && this.queued > 0 && (this.queued >= this.prebuffer || this.idleBlocks > 8)) this.playing = true;
    let i = 0;
    if (this.playing) {
      while (i < out.length && this.queue.length > 0) {
        const head = this.queue[0];
        const n = Math.min(out.length - i, head.length - this.offset);
        for (let k = 0; k < n; k++) {
          const v = head[this.offset + k];
          out[i + k] = v;
          this.energy += v * v;
        }
        i += n;
        this.offset += n;
        this.queued -= n;
        this.played += n;
        if (this.offset === head.length) {
          this.queue.shift();
          this.offset = 0;
        }
      }
      if (this.queue.length === 0) {
        this.playing = false;
        if (i < out.length && this.idleBlocks <= 2) this.gaps++; // ran dry while data was still coming
      }
    }
    out.fill(0, i);
    for (let c = 1; c < outputs[0].length; c++) outputs[0][c].set(out);
    if (++this.blocks % 16 === 0) {
      this.port.postMessage({ energy: this.energy / sampleRate, played: this.played, queued: this.queued, gaps: this.gaps });
    }
    return true;
  }
}
registerProcessor("framewire-playback", FramewirePlayback);
`;

// MAX_LOG bounds the per-frame arrival log (60 s of 20 ms frames).
const MAX_LOG = 3000;

export class WebSocketMediaManager {
  // recorderSampleRate and playerSampleRate must match the transport's
  // (its defaults: 16 kHz and 24 kHz); chunkBytes is the size of each
  // chunk of the user's audio (512 bytes, as the transport's own recorder).
  constructor({ recorderSampleRate = 16000, playerSampleRate = 24000, chunkBytes = 512 } = {}) {
    this._recorderRate = recorderSampleRate;
    this._playerRate = playerSampleRate;
    this._chunkSamples = chunkBytes / 2;
    this._userAudioCallback = () => {};
    this._options = undefined;
    this._callbacks = {};
    this._micEnabled = false;
    this._stream = null;
    this._capture = null; // {ctx, source, node}
    this._player = null; // {ctx, node, analyser}
    this._playerReady = null; // Promise of _player
    this._connected = false;
    this._pending = []; // bot frames that arrived while the player loaded
    this._resetStats();
    this.supportsScreenShare = false;
    // A page that connects on load has no user gesture yet: the browser
    // may start the player suspended, so the first gesture resumes it.
    this._resume = () => this._player?.ctx.resume().catch(() => {});
    for (const ev of ["pointerdown", "keydown"]) globalThis.document?.addEventListener(ev, this._resume, { capture: true });
  }

  _resetStats() {
    this._stats = { frames: 0, samples: 0, energy: 0, sent: 0, played: 0, playedEnergy: 0, queued: 0, gaps: 0, clears: 0 };
    this._playedBase = { played: 0, energy: 0 };
    this._log = []; // {t, rms} per bot frame, the newest MAX_LOG
  }

  // The transport's MediaManager interface.

  setUserAudioCallback(cb) {
    this._userAudioCallback = cb;
  }

  setClientOptions(options, override = false) {
    if (this._options && !override) return;
    this._options = options;
    this._callbacks = options.callbacks ?? {};
  }

  async initialize() {}

  // connect prepares the player: the bot speaks first (the greeting).
  async connect() {
    this._connected = true;
    const p = await this._ensurePlayer();
    await p.ctx.resume().catch(() => {});
  }

  async disconnect() {
    this._connected = false;
    await this.enableMic(false);
    this._stopMic();
    this._player?.node.port.postMessage({ type: "clear" });
    this._pending = [];
  }

  userStartedSpeaking() {
    this._player?.node.port.postMessage({ type: "clear" });
    this._pending = [];
    this._stats.clears++;
    return Promise.resolve();
  }

  // bufferBotAudio queues one frame of the bot's audio (Int16 mono at the
  // player's rate) and returns it.
  bufferBotAudio(data) {
    const pcm = data instanceof Int16Array ? data : new Int16Array(data);
    const f = new Float32Array(pcm.length);
    let sum = 0;
    for (let i = 0; i < pcm.length; i++) {
      const v = pcm[i] / 0x8000;
      f[i] = v;
      sum += v * v;
    }
    const s = this._stats;
    s.frames++;
    s.samples += pcm.length;
    s.energy += sum / this._playerRate;
    this._log.push({ t: performance.now(), rms: pcm.length ? Math.sqrt(sum / pcm.length) : 0 });
    if (this._log.length > MAX_LOG) this._log.splice(0, this._log.length - MAX_LOG);
    if (this._player) this._player.node.port.postMessage({ type: "audio", samples: f }, [f.buffer]);
    else if (this._connected) this._pending.push(f);
    return pcm;
  }

  tracks() {
    const audio = this._stream?.getAudioTracks()[0];
    return { local: audio ? { audio } : {} };
  }

  // enableMic turns the microphone on (asking for it the first time) or
  // off. It rejects when the browser refuses the microphone.
  async enableMic(enable) {
    if (enable && !this._stream) {
      this._stream = await navigator.mediaDevices.getUserMedia({
        audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true },
      });
      await this._startCapture(this._stream);
      const track = this._stream.getAudioTracks()[0];
      if (track) this._callbacks.onTrackStarted?.(track, { id: "local", name: "", local: true });
    }
    this._micEnabled = enable;
    this._stream?.getAudioTracks().forEach((t) => {
      t.enabled = enable;
    });
  }

  enableCam() {}
  enableScreenShare() {}
  async getAllMics() {
    return [];
  }
  async getAllCams() {
    return [];
  }
  async getAllSpeakers() {
    return [];
  }
  updateMic() {}
  updateCam() {}
  updateSpeaker() {}

  get selectedMic() {
    return {};
  }
  get selectedCam() {
    return {};
  }
  get selectedSpeaker() {
    return {};
  }
  get isMicEnabled() {
    return this._micEnabled;
  }
  get isCamEnabled() {
    return false;
  }
  get isSharingScreen() {
    return false;
  }

  // What the page and its tests read.

  // stats returns the counters since the page loaded: bot frames and
  // samples received, their energy (the sum of level² × seconds, as
  // WebRTC's totalAudioEnergy), what the player played (samples, energy,
  // queued, times it ran dry), user chunks sent and queue clears.
  stats() {
    return { ...this._stats, level: this.level() };
  }

  // arrivals returns {t, rms} for the bot frames received since t0
  // (performance.now() time).
  arrivals(t0 = 0) {
    return this._log.filter((e) => e.t >= t0);
  }

  // level is the RMS of the last 2048 samples the player output.
  level() {
    const a = this._player?.analyser;
    if (!a) return 0;
    const buf = new Float32Array(a.fftSize);
    a.getFloatTimeDomainData(buf);
    let sum = 0;
    for (const v of buf) sum += v * v;
    return Math.sqrt(sum / buf.length);
  }

  // Internals.

  _workletURL() {
    this._url ??= URL.createObjectURL(new Blob([WORKLETS], { type: "text/javascript" }));
    return this._url;
  }

  _ensurePlayer() {
    this._playerReady ??= (async () => {
      const ctx = new AudioContext({ sampleRate: this._playerRate, latencyHint: "interactive" });
      await ctx.audioWorklet.addModule(this._workletURL());
      const node = new AudioWorkletNode(ctx, "framewire-playback", {
        numberOfInputs: 0,
        outputChannelCount: [1],
        processorOptions: { prebufferSamples: Math.round(this._playerRate * 0.06) },
      });
      node.port.onmessage = (e) => {
        const m = e.data;
        this._stats.played = m.played;
        this._stats.playedEnergy = m.energy;
        this._stats.queued = m.queued;
        this._stats.gaps = m.gaps;
      };
      const analyser = ctx.createAnalyser();
      analyser.fftSize = 2048;
      node.connect(analyser);
      analyser.connect(ctx.destination);
      this._player = { ctx, node, analyser };
      for (const f of this._pending.splice(0)) node.port.postMessage({ type: "audio", samples: f }, [f.buffer]);
      return this._player;
    })();
    return this._playerReady;
  }

  async _startCapture(stream) {
    // At the target rate the browser resamples the microphone (well) and
    // the worklet passes the samples through. A browser that cannot
    // connect a microphone to a context at another rate (Firefox) gets
    // one at the device's rate, and the worklet resamples.
    let ctx, source;
    try {
      ctx = new AudioContext({ sampleRate: this._recorderRate });
      source = ctx.createMediaStreamSource(stream);
    } catch {
      ctx?.close().catch(() => {});
      ctx = new AudioContext();
      source = ctx.createMediaStreamSource(stream);
    }
    await ctx.audioWorklet.addModule(this._workletURL());
    const node = new AudioWorkletNode(ctx, "framewire-capture", {
      numberOfOutputs: 0,
      channelCount: 1,
      channelCountMode: "explicit",
      processorOptions: { targetRate: this._recorderRate, chunkSamples: this._chunkSamples },
    });
    node.port.onmessage = (e) => {
      if (!this._micEnabled || !this._connected) return;
      this._stats.sent++;
      this._userAudioCallback(e.data);
    };
    source.connect(node);
    await ctx.resume().catch(() => {});
    this._capture = { ctx, source, node };
  }

  _stopMic() {
    if (this._stream) {
      this._stream.getTracks().forEach((t) => t.stop());
      this._stream = null;
    }
    if (this._capture) {
      this._capture.source.disconnect();
      this._capture.node.port.onmessage = null;
      this._capture.ctx.close().catch(() => {});
      this._capture = null;
    }
    this._micEnabled = false;
  }
}
