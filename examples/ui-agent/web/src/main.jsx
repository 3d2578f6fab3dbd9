import { createRoot } from "react-dom/client";
import { PipecatClient, snapshotDocument } from "@pipecat-ai/client-js";
import { SmallWebRTCTransport } from "@pipecat-ai/small-webrtc-transport";
import { PipecatClientAudio, PipecatClientProvider, UIJobGroupsProvider } from "@pipecat-ai/client-react";
import { DemoMediaManager } from "./media.js";
import { App } from "./App.jsx";
import { watchSnapshots } from "./snapshots.js";

// One client for the page's lifetime: the transport connects to the Go
// server that served this page (same origin: no CORS, and 127.0.0.1 is a
// secure context, so the microphone works without TLS).
const media = new DemoMediaManager();
const transport = new SmallWebRTCTransport({ mediaManager: media });
media.attach(transport);

// window.__demo is what the end-to-end test reads; it is harmless in a
// normal browser.
const demo = (window.__demo = { ready: false, commands: [], errors: [], snapshots: 0 });
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
// The snapshot the client would send now (for tests and curious users).
demo.snapshot = () => snapshotDocument(document.body);

createRoot(document.getElementById("root")).render(
  <PipecatClientProvider client={client}>
    <UIJobGroupsProvider maxGroups={4}>
      <App client={client} media={media} />
    </UIJobGroupsProvider>
    <PipecatClientAudio />
  </PipecatClientProvider>,
);
