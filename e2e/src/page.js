// The test page's logic, shared by both bundles (client-js 1.13 with
// small-webrtc-transport 1.10.8, and client-js 1.9 with 1.10.2). It drives
// the real clients and records what they see in window.__e2e, which the
// Node test runner reads through playwright.
import { PipecatClient, RTVIEvent } from "@pipecat-ai/client-js";
import { SmallWebRTCTransport } from "@pipecat-ai/small-webrtc-transport";

const state = {
  log: [],       // transport states and callbacks, in order
  raw: [],       // every data-channel frame from the server, as text
  botReady: null,
  error: null,
  trackStarted: [],
  botDisconnected: false,
};
window.__e2e = state;

function log(...parts) {
  const line = parts.map((p) => (typeof p === "string" ? p : JSON.stringify(p))).join(" ");
  state.log.push(line);
  console.log("[e2e]", line);
}

// StubMediaManager replaces the default DailyMediaManager, which downloads
// daily-js's call machine from c.daily.co and hangs offline. With mic: true it hands the transport
// Chromium's fake microphone.
class StubMediaManager {
  constructor(mic) {
    this._mic = mic;
    this._track = null;
    this.selectedMic = {};
    this.selectedCam = {};
    this.selectedSpeaker = {};
    this.isMicEnabled = mic;
    this.isCamEnabled = false;
    this.isSharingScreen = false;
    this.supportsScreenShare = false;
  }
  setUserAudioCallback() {}
  setClientOptions() {}
  async initialize() {
    if (this._mic) {
      const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
      this._track = stream.getAudioTracks()[0];
    }
  }
  async connect() {}
  async disconnect() {
    if (this._track) this._track.stop();
  }
  tracks() {
    return { local: this._track ? { audio: this._track } : {} };
  }
  enableMic(b) { this.isMicEnabled = b; }
  enableCam(b) { this.isCamEnabled = b; }
  enableScreenShare(b) { this.isSharingScreen = b; }
  async getAllMics() { return []; }
  async getAllCams() { return []; }
  async getAllSpeakers() { return []; }
  updateMic() {}
  updateCam() {}
  updateSpeaker() {}
  userStartedSpeaking() {}
  bufferBotAudio() {}
}

// connect starts a client. startFlow uses POST /start and the session path;
// otherwise it posts straight to /api/offer.
window.connect = async ({ startFlow = false, mic = false, base = location.origin } = {}) => {
  const transport = new SmallWebRTCTransport({ mediaManager: new StubMediaManager(mic) });
  const client = new PipecatClient({
    transport,
    enableMic: mic,
    enableCam: false,
    callbacks: {
      onTransportStateChanged: (s) => {
        log("state", s);
        if (s === "connected" && transport.dc) {
          transport.dc.addEventListener("message", (e) => state.raw.push(String(e.data)));
        }
      },
      onBotConnected: (p) => log("botConnected", p && p.id),
      onTrackStarted: (t, p) => {
        if (!p || !p.local) {
          state.trackStarted.push(t.kind);
          log("remote track", t.kind);
          const el = document.createElement("audio");
          el.srcObject = new MediaStream([t]);
          el.autoplay = true;
          document.body.appendChild(el);
        }
      },
      onBotReady: (d) => { state.botReady = d; log("botReady", d); },
      onBotDisconnected: () => { state.botDisconnected = true; log("botDisconnected"); },
      onDisconnected: () => log("disconnected"),
      onMessageError: (m) => log("messageError", m),
      onError: (m) => log("error", m),
    },
  });
  window.__client = client;
  window.__transport = transport;
  try {
    const data = startFlow
      ? await client.startBotAndConnect({ endpoint: `${base}/start`, requestData: { body: { from: "e2e" } } })
      : await client.connect({ webrtcRequestParams: { endpoint: `${base}/api/offer` } });
    state.connectResult = data;
    return data;
  } catch (e) {
    state.error = String(e && (e.message || e));
    log("connect failed", state.error);
    throw e;
  }
};

// rtvi sends one RTVI message on the raw channel with a fresh id and
// returns the id.
let rawIds = 0;
window.rtvi = (type, data) => {
  const id = "e2e" + String(++rawIds).padStart(5, "0");
  window.__transport.dc.send(JSON.stringify({ label: "rtvi-ai", type, id, data }));
  return id;
};

// sendRaw writes one text frame on the transport's data channel, bypassing
// client-js (for the bad-input scenarios).
window.sendRaw = (text) => window.__transport.dc.send(text);

window.pcId = () => window.__transport.pc_id;

// inboundAudio returns the inbound audio RTP stats of the peer connection:
// codec MIME type, mid and bytes received.
window.inboundAudio = async () => {
  const stats = await window.__transport.pc.getStats();
  let out = null;
  stats.forEach((s) => {
    if (s.type === "inbound-rtp" && s.kind === "audio") {
      const codec = s.codecId && stats.get(s.codecId);
      out = { mid: s.mid, mimeType: codec && codec.mimeType, bytes: s.bytesReceived, packets: s.packetsReceived };
    }
  });
  return out;
};

// rtcpStats returns what Chromium learned from the server's RTCP reports:
// its receiver reports on the microphone's stream (remote-inbound-rtp) and
// its sender reports on the bot's audio (remote-outbound-rtp).
window.rtcpStats = async () => {
  const stats = await window.__transport.pc.getStats();
  const out = { remoteInbound: null, remoteOutbound: null };
  stats.forEach((s) => {
    if (s.kind !== "audio") return;
    if (s.type === "remote-inbound-rtp") {
      out.remoteInbound = {
        packetsLost: s.packetsLost, fractionLost: s.fractionLost, jitter: s.jitter,
        roundTripTime: s.roundTripTime, reports: s.reportsReceived,
      };
    }
    if (s.type === "remote-outbound-rtp") {
      out.remoteOutbound = { packetsSent: s.packetsSent, bytesSent: s.bytesSent, reports: s.reportsSent };
    }
  });
  return out;
};

export { RTVIEvent };
