import { useCallback, useEffect, useRef, useState } from "react";
import { RTVIEvent, findElementByRef } from "@pipecat-ai/client-js";
import { useRTVIClientEvent } from "@pipecat-ai/client-react";
import { TaskCards } from "./TaskCards.jsx";
import { nextSnapshot } from "./snapshots.js";

const suggestions = [
  "Where is the iPhone 17?",
  "Which phones are from Google?",
  "Add the iPhone 17 to my cart",
  "Where does it talk about problem solving?",
  "Explain this",
  "My name is Ada Lovelace and my email is ada@example.com",
  "What have I entered?",
  "Compare prices for the iPhone 17",
];

// Assistant is the side panel: task cards, the conversation (transcripts,
// bot output and the UI commands the agent sent), the text box and the
// microphone. The conversation is left out of the accessibility snapshot
// (data-a11y-exclude): the agent has the conversation in its context
// already, and the snapshot budget is better spent on the page.
export function Assistant({ client, media, config, connected, connectError }) {
  const [entries, setEntries] = useState([]);
  // pending is true from a sent message until the agent's first words or
  // action, for the "thinking" dots.
  const [pending, setPending] = useState(false);
  useEffect(() => {
    if (!pending) return undefined;
    const t = setTimeout(() => setPending(false), 30000);
    return () => clearTimeout(t);
  }, [pending]);
  const [text, setText] = useState("");
  const [mic, setMic] = useState("off"); // off | starting | on | error
  const [micError, setMicError] = useState("");
  // A disconnect stops the microphone (the media managers drop it): the
  // button says so, and a reconnect starts with it off.
  useEffect(() => {
    if (!connected) setMic((m) => (m === "on" ? "off" : m));
  }, [connected]);
  const seenSegments = useRef(new Set());
  const nextId = useRef(1);
  const logRef = useRef(null);

  const add = useCallback((update) => setEntries((list) => update(list.slice())), []);
  // Keep the newest message in view.
  useEffect(() => {
    logRef.current?.scrollTo({ top: logRef.current.scrollHeight, behavior: "smooth" });
  }, [entries, pending]);

  // openAssistant returns the list with an open assistant entry at the end.
  const openAssistant = (list) => {
    const last = list[list.length - 1];
    if (last && last.role === "assistant") return list;
    list.push({ id: nextId.current++, role: "assistant", text: "", actions: [] });
    return list;
  };

  const addUser = useCallback(
    (value, via, final = true) =>
      add((list) => {
        const last = list[list.length - 1];
        if (via === "voice" && last && last.role === "user" && last.via === "voice" && !last.final) {
          list[list.length - 1] = { ...last, text: value, final };
          return list;
        }
        list.push({ id: nextId.current++, role: "user", via, text: value, final });
        return list;
      }),
    [add],
  );

  useRTVIClientEvent(
    RTVIEvent.UserTranscript,
    useCallback(
      (d) => {
        addUser(d.text ?? "", "voice", Boolean(d.final));
        if (d.final) setPending(true);
      },
      [addUser],
    ),
  );

  // The bot's words: with a TTS the server sends bot-output as the audio
  // plays; in a text chat the answer is the LLM's text (bot-llm-text).
  const spoken = Boolean(config?.voice?.tts);
  const appendBot = useCallback(
    (chunk, separate) => {
      setPending(false);
      add((list) => {
        list = openAssistant(list);
        const last = list[list.length - 1];
        const sep = separate && last.text && !/\s$/.test(last.text) && !/^\s/.test(chunk) ? " " : "";
        list[list.length - 1] = { ...last, text: last.text + sep + chunk };
        return list;
      });
    },
    [add],
  );

  useRTVIClientEvent(
    RTVIEvent.BotOutput,
    useCallback(
      (d) => {
        if (!spoken) return;
        // Progress messages move a cursor through text already shown.
        if (d.spoken_status === "in-progress") return;
        if (d.segment_id != null) {
          if (seenSegments.current.has(d.segment_id)) return;
          seenSegments.current.add(d.segment_id);
        }
        const chunk = String(d.text ?? "");
        if (chunk) appendBot(chunk, true);
      },
      [appendBot, spoken],
    ),
  );

  useRTVIClientEvent(
    RTVIEvent.BotLlmText,
    useCallback(
      (d) => {
        if (spoken) return;
        const chunk = String(d.text ?? "");
        if (chunk) appendBot(chunk, false);
      },
      [appendBot, spoken],
    ),
  );

  useRTVIClientEvent(
    RTVIEvent.UICommand,
    useCallback(
      (d) => {
        const label = describeCommand(d.command, d.payload);
        setPending(false);
        add((list) => {
          list = openAssistant(list);
          const last = list[list.length - 1];
          list[list.length - 1] = { ...last, actions: [...last.actions, label] };
          return list;
        });
      },
      [add],
    ),
  );

  useRTVIClientEvent(
    RTVIEvent.Error,
    useCallback(
      // An RTVI error message's text is data.error ("Speech output is
      // unavailable for the moment (error id …)").
      (m) => add((list) => [...list, { id: nextId.current++, role: "system", text: String(m?.data?.error ?? m?.data?.message ?? "The bot ran into a problem.") }]),
      [add],
    ),
  );

  // The user's last selection in the page. Focusing the text box moves
  // the browser's selection into it, so "this" in a typed "explain this"
  // would be lost; the page remembers the selection, shows it above the
  // text box, and puts it back (and waits until a snapshot with it went
  // out) before sending the text.
  const savedRange = useRef(null);
  const [selection, setSelection] = useState("");
  useEffect(() => {
    const content = () => document.querySelector(".content");
    const onChange = () => {
      const sel = document.getSelection();
      if (!sel || sel.rangeCount === 0) return;
      const range = sel.getRangeAt(0);
      if (!content()?.contains(range.commonAncestorContainer)) return;
      const text = sel.toString().replace(/\s+/g, " ").trim();
      if (!sel.isCollapsed && text) {
        savedRange.current = range.cloneRange();
        setSelection(text);
      } else if (sel.isCollapsed) {
        savedRange.current = null;
        setSelection("");
      }
    };
    document.addEventListener("selectionchange", onChange);
    return () => document.removeEventListener("selectionchange", onChange);
  }, []);
  const clearSelection = () => {
    savedRange.current = null;
    setSelection("");
  };
  const restoreSelection = async () => {
    const range = savedRange.current;
    if (!range) return;
    const sel = document.getSelection();
    const live = sel && sel.rangeCount > 0 && !sel.isCollapsed && contentContains(sel.getRangeAt(0));
    if (live) return;
    const seen = nextSnapshot((tree) => Boolean(tree?.selection?.text), 2000);
    // The text box holds the selection while it has focus: let go of it,
    // so the page's selection (and the snapshot) shows the user's text.
    if (document.activeElement instanceof HTMLElement) document.activeElement.blur();
    sel.removeAllRanges();
    sel.addRange(range);
    await seen;
  };

  const send = useCallback(
    async (value) => {
      const t = value.trim();
      if (!t || !connected) return;
      addUser(t, "typed");
      setPending(true);
      await restoreSelection();
      try {
        await client.sendText(t);
      } catch (e) {
        add((list) => [...list, { id: nextId.current++, role: "system", text: `Could not send: ${e?.message ?? e}` }]);
      }
    },
    [add, addUser, client, connected],
  );

  const onSubmit = (e) => {
    e.preventDefault();
    send(text);
    setText("");
  };

  const voice = config?.voice ?? {};
  const voiceOn = Boolean(voice.stt);

  const toggleMic = async () => {
    if (!voiceOn || !connected) return;
    if (mic === "on") {
      client.enableMic(false);
      setMic("off");
      return;
    }
    setMic("starting");
    setMicError("");
    try {
      await media.enableMic(true);
      client.enableMic(true);
      setMic("on");
    } catch (e) {
      setMic("error");
      setMicError(`The browser refused the microphone: ${e?.message ?? e}`);
    }
  };

  return (
    <aside className="assistant" aria-label="Assistant">
      <TaskCards />
      <section className="conversation" aria-labelledby="conversation-title" data-a11y-exclude="">
        <h2 id="conversation-title">Conversation</h2>
        <ol className="log" ref={logRef} role="log" aria-live="polite" aria-label="Conversation messages" data-testid="conversation">
          {entries.length === 0 && (
            <li className="entry entry-system">
              {connected ? "Connected. Type a message below or pick a suggestion." : connectError ? `Could not connect: ${connectError}` : "Connecting to the agent…"}
            </li>
          )}
          {entries.map((e) => (
            <li key={e.id} className={`entry entry-${e.role}`} data-role={e.role}>
              <span className="who">{e.role === "user" ? (e.via === "voice" ? "You (voice)" : "You") : e.role === "assistant" ? "Agent" : "Note"}</span>
              {e.text && <p className="bubble">{e.text}</p>}
              {e.actions?.length > 0 && (
                <ul className="actions" aria-label="Page actions">
                  {e.actions.map((a, i) => (
                    <li key={i}>{a}</li>
                  ))}
                </ul>
              )}
            </li>
          ))}
          {pending && (
            <li className="entry entry-assistant thinking" aria-label="The agent is thinking">
              <span className="who">Agent</span>
              <p className="bubble">
                <span className="dot" />
                <span className="dot" />
                <span className="dot" />
              </p>
            </li>
          )}
        </ol>
        <div className="suggestions" role="group" aria-label="Suggestions">
          {suggestions.map((s) => (
            <button key={s} type="button" className="chip" onClick={() => send(s)} disabled={!connected}>
              {s}
            </button>
          ))}
        </div>
        {selection && (
          <p className="selection-chip">
            <span className="selection-label">Selected:</span> <q>{selection.length > 70 ? `${selection.slice(0, 67)}…` : selection}</q>
            <button type="button" className="chip-clear" aria-label="Forget the selection" onClick={clearSelection}>
              ✕
            </button>
          </p>
        )}
        <form className="composer" onSubmit={onSubmit}>
          <label htmlFor="say" className="sr-only">
            Message to the agent
          </label>
          <input
            id="say"
            name="say"
            autoComplete="off"
            placeholder={connected ? "Type a message…" : "Connecting…"}
            value={text}
            onChange={(e) => setText(e.target.value)}
          />
          <button type="submit" className="btn btn-primary" disabled={!connected || !text.trim()}>
            Send
          </button>
          <button
            type="button"
            className={`btn mic mic-${mic}`}
            aria-pressed={mic === "on"}
            aria-label={voiceOn ? (mic === "on" ? "Turn microphone off" : "Turn microphone on") : "Microphone unavailable"}
            title={voiceOn ? "Talk to the agent" : voice.note}
            disabled={!voiceOn || !connected}
            onClick={toggleMic}
          >
            <MicIcon />
          </button>
        </form>
        <p className={`voice-note ${voiceOn ? "" : "voice-off"}`} id="voice-note">
          {voiceOn ? (micError || (mic === "on" ? "Listening… speak naturally." : voice.note || "Voice is on: press the microphone to talk.")) : voice.note || "Voice is off: text only."}
        </p>
      </section>
    </aside>
  );
}

function contentContains(range) {
  return Boolean(document.querySelector(".content")?.contains(range.commonAncestorContainer));
}

function MicIcon() {
  return (
    <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" focusable="false">
      <path
        fill="currentColor"
        d="M12 14a3 3 0 0 0 3-3V5a3 3 0 0 0-6 0v6a3 3 0 0 0 3 3Zm5-3a5 5 0 0 1-10 0H5a7 7 0 0 0 6 6.92V21h2v-3.08A7 7 0 0 0 19 11h-2Z"
      />
    </svg>
  );
}

// describeCommand turns a ui-command into a short line for the log.
function describeCommand(command, payload = {}) {
  const target = targetName(payload);
  switch (command) {
    case "scroll_to":
      return `scrolled to ${target}`;
    case "highlight":
      return `highlighted ${target}`;
    case "select_text":
      return `selected ${target}`;
    case "set_input_value":
      return payload.value ? `filled ${target} with “${payload.value}”` : `cleared ${target}`;
    case "click":
      return `clicked ${target}`;
    case "focus":
      return `focused ${target}`;
    default:
      return `${command}`;
  }
}

function targetName(payload) {
  const el = (payload?.ref && findElementByRef(payload.ref)) || (payload?.target_id && document.getElementById(payload.target_id));
  if (!el) return payload?.ref ?? payload?.target_id ?? "an element";
  const label =
    el.getAttribute("aria-label") ||
    (el.labels && el.labels[0]?.textContent) ||
    (el.id && document.querySelector(`[aria-labelledby~="${el.id}"]`) ? null : null) ||
    el.textContent;
  const name = (label || "").replace(/\s+/g, " ").trim();
  return name.length > 48 ? `“${name.slice(0, 45)}…”` : name ? `“${name}”` : payload.ref;
}
