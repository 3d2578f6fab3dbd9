import { createRoot } from "react-dom/client";
import { PipecatClient, snapshotDocument } from "@pipecat-ai/client-js";
import { SmallWebRTCTransport } from "@pipecat-ai/small-webrtc-transport";
import { WebSocketTransport } from "@pipecat-ai/websocket-transport";
import { PipecatClientAudio, PipecatClientProvider, UIJobGroupsProvider } from "@pipecat-ai/client-react";
import { DemoMediaManager } from "./media.js";
import { WebSocketMediaManager } from "./wsmedia.js";
import { App } from "./App.jsx";
import { watchSnapshots } from "./snapshots.js";

// The transport: WebRTC (SmallWebRTC) by default, Pipecat's WebSocket
// transport with ?transport=websocket. The server serves both.
const kind = new URLSearchParams(location.search).get("transport") === "websocket" ? "websocket" : "webrtc";

// One client for the page's lifetime: the transport connects to the Go
// server that served this page (same origin: no CORS, and 127.0.0.1 is a
// secure context, so the microphone works without TLS).
let media, transport;
if (kind === "websocket") {
  media = new WebSocketMediaManager();
  transport = new WebSocketTransport({ mediaManager: media });
} else {
  media = new DemoMediaManager();
  transport = new SmallWebRTCTransport({ mediaManager: media });
  media.attach(transport);
}

// window.__demo is what the end-to-end test reads; it is harmless in a
// normal browser.
const demo = (window.__demo = { ready: false, commands: [], errors: [], snapshots: 0, transportKind: kind, userSpeaking: [] });
watchSnapshots(transport, demo);

const client = new PipecatClient({
  transport,
  enableMic: false,
  enableCam: false,
  callbacks: {
    onBotReady: (data) => {
      demo.ready = true;
      demo.botReady = data;
    },
    onDisconnected: () => {
      demo.ready = false;
    },
    // The WebSocket client does nothing when the user barges in (the
    // server stops sending): the page drops the bot's audio still queued.
    onUserStartedSpeaking: () => {
      demo.userSpeaking.push({ started: performance.now() });
      if (demo.userSpeaking.length > 100) demo.userSpeaking.shift(); // the newest turns only
      if (kind === "websocket") media.userStartedSpeaking();
    },
    onUserStoppedSpeaking: () => {
      const last = demo.userSpeaking[demo.userSpeaking.length - 1];
      if (last && last.stopped === undefined) last.stopped = performance.now();
    },
    onUICommand: (data) => {
      demo.commands.push(data);
    },
    onError: (message) => {
      demo.errors.push(message?.data ?? message);
      console.warn("[demo] error", message);
    },
  },
});
demo.client = client;
demo.transport = transport;
demo.media = media;
// The snapshot the client would send now (for tests and curious users).
demo.snapshot = () => snapshotDocument(document.body);

createRoot(document.getElementById("root")).render(
  <PipecatClientProvider client={client}>
    <UIJobGroupsProvider maxGroups={4}>
      <App client={client} media={media} transportKind={kind} />
    </UIJobGroupsProvider>
    <PipecatClientAudio />
  </PipecatClientProvider>,
);
