// A fake OpenAI-compatible chat server for agent.test.mjs: it answers
// POST /v1/chat/completions (stream: true) the way the API streams a tool
// call. For a user turn it reads the page from the request's <ui_state>
// block, finds the refs of the named elements, and calls the reply tool
// once with the actions the test expects. Any other inference (none is
// expected: reply ends the turn) gets an empty stop.
import { createServer } from "node:http";

export const ANSWER = "Done: filled and checked";

// The accessible names of the elements the reply acts on.
export const NAMES = {
  target: "Delivery details card",
  name: "Full name",
  street: "Street address",
  terms: "I accept the delivery terms",
};

// refOf finds the ref of the element named name in a rendered <ui_state>
// (processors/uiagent/render.go: `- role "name" [= "value"] [state]... [ref=eN]`).
export function refOf(uiState, name) {
  for (const line of uiState.split("\n")) {
    const m = line.match(/^\s*- \S+ "(.*?)"(?: = ".*")?(?: \[[^\]]*\])* \[ref=([^\]]+)\]:?$/);
    if (m && m[1] === name) return m[2];
  }
  return null;
}

function text(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => p?.text ?? "").join("");
  return "";
}

// startFakeOpenAI listens on a free loopback port. It resolves to
// {baseURL, requests, replies, close}: requests are the parsed request
// bodies, replies the reply arguments sent.
export async function startFakeOpenAI() {
  const requests = [];
  const replies = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      let parsed;
      try {
        parsed = JSON.parse(body);
      } catch {
        parsed = null;
      }
      if (req.url !== "/v1/chat/completions") {
        // A chat-only model server (Ollama, llama.cpp) has no other endpoint.
        res.writeHead(404, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
        return;
      }
      if (req.method !== "POST" || !parsed) {
        res.writeHead(400, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ error: { message: `unexpected ${req.method} ${req.url}` } }));
        return;
      }
      requests.push(parsed);
      res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
      const chunk = (delta, finish = null) =>
        res.write(
          `data: ${JSON.stringify({ id: "chatcmpl-e2e", object: "chat.completion.chunk", model: parsed.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
        );
      const msgs = parsed.messages ?? [];
      const last = msgs[msgs.length - 1];
      if (last?.role !== "user") {
        chunk({ role: "assistant" });
        chunk({}, "stop");
        res.end("data: [DONE]\n\n");
        return;
      }
      const state = msgs.map((m) => text(m.content)).filter((c) => c.includes("<ui_state>")).pop() ?? "";
      const ref = Object.fromEntries(Object.entries(NAMES).map(([k, n]) => [k, refOf(state, n)]));
      const missing = Object.keys(ref).filter((k) => !ref[k]);
      const args = missing.length
        ? { answer: `I cannot see ${missing.map((k) => NAMES[k]).join(", ")} on the page.` }
        : {
            answer: ANSWER,
            scroll_to: ref.target,
            highlight: [ref.target],
            fills: [
              { ref: ref.name, value: "Ada Lovelace" },
              { ref: ref.street, value: "12 St James's Square" },
            ],
            click: [ref.terms],
          };
      replies.push({ args, refs: ref, state });
      const json = JSON.stringify(args);
      const cut = Math.floor(json.length / 2);
      chunk({ role: "assistant", tool_calls: [{ index: 0, id: "call_e2e", type: "function", function: { name: "reply", arguments: json.slice(0, cut) } }] });
      chunk({ tool_calls: [{ index: 0, function: { arguments: json.slice(cut) } }] });
      chunk({}, "tool_calls");
      res.end("data: [DONE]\n\n");
    });
  });
  await new Promise((res) => server.listen(0, "127.0.0.1", res));
  const { port } = server.address();
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    replies,
    close: () => new Promise((res) => server.close(res)),
  };
}
