// The page of agent.test.mjs: a React app on @pipecat-ai/client-react
// whose only agent plumbing is the library's own snapshot hook and
// default command handlers, connected to the server that serves it (same
// origin) with small-webrtc-transport, or with websocket-transport when
// opened with ?transport=websocket (the demo page's media managers). It
// has a tall filler, a target card far below the fold, and a form with
// two labelled text inputs and a labelled checkbox. window.__agent is what
// the test reads.
import { createRoot } from "react-dom/client";
import { useEffect } from "react";
import { PipecatClient } from "@pipecat-ai/client-js";
import { SmallWebRTCTransport } from "@pipecat-ai/small-webrtc-transport";
import { WebSocketTransport } from "@pipecat-ai/websocket-transport";
import { PipecatClientProvider, useDefaultUICommandHandlers, useUISnapshot } from "@pipecat-ai/client-react";
import { DemoMediaManager } from "../../web/src/media.js";
import { WebSocketMediaManager } from "../../web/src/wsmedia.js";

const websocket = new URLSearchParams(location.search).get("transport") === "websocket";
let transport;
if (websocket) {
  transport = new WebSocketTransport({ mediaManager: new WebSocketMediaManager() });
} else {
  const media = new DemoMediaManager();
  transport = new SmallWebRTCTransport({ mediaManager: media });
  media.attach(transport);
}

const agent = (window.__agent = { ready: false, sent: [], snapshots: 0, botOutput: [], commands: [], errors: [], highlighted: false });

// Record the type of every message the client sends (the snapshots and
// the user's send-text), still sending each as before.
const send = transport.sendMessage.bind(transport);
transport.sendMessage = (message) => {
  agent.sent.push(message?.type);
  if (message?.type === "ui-snapshot") agent.snapshots++;
  return send(message);
};

const client = new PipecatClient({
  transport,
  enableMic: false,
  enableCam: false,
  callbacks: {
    onBotReady: (data) => {
      agent.ready = true;
      agent.botReady = data;
    },
    onBotOutput: (data) => agent.botOutput.push(data),
    onUICommand: (data) => agent.commands.push(data),
    onError: (message) => agent.errors.push(message?.data ?? message),
  },
});
agent.client = client;

function App() {
  useUISnapshot({ debounceMs: 100 });
  useDefaultUICommandHandlers({
    scrollTo: { block: "start" },
    highlight: { defaultDurationMs: 60000 },
    setInputValue: { focusFirst: false },
  });
  useEffect(() => {
    // The highlight class comes and goes; remember that it came.
    const target = document.getElementById("target");
    const seen = new MutationObserver(() => {
      if (target.classList.contains("ui-highlight")) agent.highlighted = true;
    });
    seen.observe(target, { attributes: true, attributeFilter: ["class"] });
    const connecting = websocket
      ? client.startBotAndConnect({ endpoint: "/ws/connect" })
      : client.connect({ webrtcRequestParams: { endpoint: "/api/offer" } });
    connecting.catch((e) => agent.errors.push(String(e?.message ?? e)));
    return () => {
      seen.disconnect();
      client.disconnect();
    };
  }, []);
  return (
    <main>
      <h1>Agent test page</h1>
      <div className="filler">
        <p>Filler: the card and the form are far below.</p>
      </div>
      <section id="target" className="card" aria-label="Delivery details card">
        <h2>Delivery details</h2>
        <p>We deliver on weekdays between nine and five.</p>
      </section>
      <form aria-label="Delivery form" onSubmit={(e) => e.preventDefault()}>
        <label>
          Full name
          <input id="full-name" type="text" name="full-name" />
        </label>
        <label>
          Street address
          <input id="street" type="text" name="street" />
        </label>
        <div className="check">
          <input id="terms" type="checkbox" name="terms" />
          <label htmlFor="terms">I accept the delivery terms</label>
        </div>
      </form>
    </main>
  );
}

createRoot(document.getElementById("root")).render(
  <PipecatClientProvider client={client}>
    <App />
  </PipecatClientProvider>,
);
