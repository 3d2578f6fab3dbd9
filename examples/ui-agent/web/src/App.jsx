import { useCallback, useEffect, useState } from "react";
import {
  useDefaultUICommandHandlers,
  usePipecatClientTransportState,
  useUICommandHandler,
  useUISnapshot,
} from "@pipecat-ai/client-react";
import { findElementByRef } from "@pipecat-ai/client-js";
import { Catalog } from "./Catalog.jsx";
import { Article } from "./Article.jsx";
import { ApplicationForm } from "./ApplicationForm.jsx";
import { Assistant } from "./Assistant.jsx";

const OFFER_ENDPOINT = "/api/offer";
// The WebSocket transport's connect endpoint: it answers {"wsUrl": ...}.
const WS_CONNECT_ENDPOINT = "/ws/connect";

// transportKind is "webrtc" or "websocket" (main.jsx, ?transport=).
export function App({ client, media, transportKind = "webrtc" }) {
  const [config, setConfig] = useState(null);
  const [connectError, setConnectError] = useState(null);
  const [cart, setCart] = useState([]);
  const transportState = usePipecatClientTransportState();
  const connected = transportState === "ready";

  // The snapshot stream: the server's UI agent sees this page through it.
  // It starts with each connection, so a new session (a reconnect) gets a
  // snapshot at once instead of at the page's next change.
  useUISnapshot({ debounceMs: 250, enabled: connected });
  // scroll_to, highlight, select_text, set_input_value, click and focus.
  useDefaultUICommandHandlers({
    scrollTo: { block: "center" },
    highlight: { defaultDurationMs: 2500 },
    setInputValue: { focusFirst: false },
  });
  // The default highlight handler shows one element at a time
  // (ui-agent.md §6.3); a reply that points at several phones flashes
  // them all through this extra class.
  useUICommandHandler(
    "highlight",
    useCallback((payload) => {
      const el = (payload?.ref && findElementByRef(payload.ref)) || (payload?.target_id && document.getElementById(payload.target_id));
      if (!(el instanceof HTMLElement)) return;
      el.classList.remove("ui-highlight-all");
      void el.offsetWidth; // restart the animation
      el.classList.add("ui-highlight-all");
      setTimeout(() => el.classList.remove("ui-highlight-all"), payload?.duration_ms ?? 2500);
    }, []),
  );

  useEffect(() => {
    fetch("/api/config")
      .then((r) => r.json())
      .then(setConfig)
      .catch(() => setConfig({ brain: { kind: "unknown", label: "unknown brain" }, voice: {} }));
  }, []);

  const connect = useCallback(async () => {
    setConnectError(null);
    try {
      if (transportKind === "websocket") {
        await client.startBotAndConnect({ endpoint: WS_CONNECT_ENDPOINT, requestData: { page: "ui-agent" } });
      } else {
        await client.connect({ webrtcRequestParams: { endpoint: OFFER_ENDPOINT } });
      }
    } catch (e) {
      setConnectError(String(e?.message ?? e));
    }
  }, [client, transportKind]);

  useEffect(() => {
    connect();
    return () => {
      client.disconnect();
    };
  }, [client, connect]);

  const brain = config?.brain;

  return (
    <div className="app">
      <header className="topbar">
        <div className="brand">
          <span className="logo" aria-hidden="true">
            ◆
          </span>
          <h1>framewire UI agent demo</h1>
        </div>
        <div className="topbar-status">
          {brain && (
            <p
              id="brain-label"
              className={`badge ${brain.kind === "demo" ? "badge-demo" : "badge-llm"}`}
              title={brain.detail}
            >
              {brain.kind === "demo" ? "Offline demo brain" : `LLM: ${brain.label}`}
            </p>
          )}
          <p className={`badge badge-conn state-${transportState}`} role="status" aria-live="polite">
            {connected ? "Connected" : transportState === "error" || connectError ? "Not connected" : "Connecting…"}
          </p>
          {!connected && (transportState === "disconnected" || transportState === "error") && (
            <button type="button" className="btn btn-small" onClick={connect}>
              Reconnect
            </button>
          )}
          {/* The other transport is one click away; left out of the
              snapshot: it is not part of the page the agent drives. */}
          <a
            id="transport-switch"
            className="badge badge-link"
            href={transportKind === "websocket" ? "?" : "?transport=websocket"}
            data-a11y-exclude=""
            title="The page reloads on the other transport; the server serves both"
          >
            {transportKind === "websocket" ? "WebSocket · switch to WebRTC" : "WebRTC · switch to WebSocket"}
          </a>
          {config?.inspector && (
            // The operator's view of the live session (FRAMEWIRE_INSPECTOR=1);
            // left out of the snapshot: it is not part of the page the agent drives.
            <a
              id="inspector-link"
              className="badge badge-link"
              href={config.inspector}
              target="_blank"
              rel="noopener"
              data-a11y-exclude=""
              title="The live session inspector: processors, turns and RTVI messages"
            >
              Inspector
            </a>
          )}
          <p className="cart" aria-live="polite">
            Cart: {cart.length} {cart.length === 1 ? "item" : "items"}
          </p>
        </div>
      </header>
      {brain?.kind === "demo" && (
        <p className="demo-note" data-a11y-exclude="">
          No LLM is configured, so answers come from the <strong>offline demo brain</strong>: a small, deterministic
          rule set that reads the page snapshot and calls the same <code>reply</code> tool a model would. Set{" "}
          <code>OPENAI_API_KEY</code> to use a real model.
        </p>
      )}
      <div className="layout">
        <main className="content">
          <Catalog cart={cart} setCart={setCart} />
          <Article />
          <ApplicationForm />
        </main>
        <Assistant client={client} media={media} config={config} connected={connected} connectError={connectError} />
      </div>
    </div>
  );
}
