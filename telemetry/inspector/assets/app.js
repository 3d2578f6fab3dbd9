"use strict";
// The inspector page: polls the JSON endpoints once a second.
const $ = (id) => document.getElementById(id);
let current = "";

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

async function get(path) {
  const r = await fetch(path, { cache: "no-store" });
  if (!r.ok) throw new Error(path + ": " + r.status);
  return r.json();
}

async function refreshList() {
  const list = await get("api/sessions");
  const sel = $("sessions");
  const ids = list.map((s) => s.id);
  if (sel.options.length !== ids.length || [...sel.options].some((o, i) => o.value !== ids[i])) {
    sel.replaceChildren(...list.map((s) => { const o = el("option", "", s.id + (s.ended ? " (ended)" : "")); o.value = s.id; return o; }));
  }
  if (!ids.includes(current)) current = ids[ids.length - 1] || "";
  sel.value = current;
}

function graph(d) {
  const g = $("graph");
  const parts = [];
  d.nodes.forEach((n, i) => {
    if (i > 0) parts.push(el("span", "arrow", "→"));
    const box = el("div", "node");
    box.dataset.node = n.name;
    box.append(el("b", "", n.name), el("div", "", "frames in " + n.received + " · handled " + n.processed));
    box.append(el("div", "q", "queue " + n.queue));
    parts.push(box);
  });
  g.replaceChildren(...parts);
}

function kindOf(s) {
  if (s.name.startsWith("execute_tool")) return "tool";
  return s.attrs["framewire.service.kind"] || "";
}

function turns(d) {
  const byParent = {};
  for (const s of d.spans) (byParent[s.parent] ||= []).push(s);
  const turnSpans = d.spans.filter((s) => s.name === "turn").slice(-10).reverse();
  const out = turnSpans.map((t) => {
    const box = el("div", "turn");
    const end = t.end_ms < 0 ? Date.now() : t.end_ms;
    const rows = [];
    const walk = (p, depth) => (byParent[p.id] || []).forEach((c) => { rows.push([c, depth]); walk(c, depth + 1); });
    walk(t, 0);
    let stop = t.end_ms;
    for (const [c] of rows) stop = Math.max(stop, c.end_ms);
    if (stop < 0) stop = t.start_ms + 1000;
    const span = Math.max(stop - t.start_ms, 1);
    const title = "turn " + t.attrs["framewire.turn.number"] + " · " + t.attrs["framewire.turn.kind"] +
      (t.attrs["framewire.turn.latency_ms"] !== undefined ? " · latency " + Math.round(t.attrs["framewire.turn.latency_ms"]) + " ms" : "") +
      (t.attrs["framewire.turn.interrupted"] ? " · interrupted" : "");
    box.append(el("div", t.attrs["framewire.turn.interrupted"] ? "interrupted" : "", title));
    for (const [c, depth] of rows) {
      const row = el("div", "row");
      row.dataset.span = c.name;
      const label = el("div", "label", "\u00a0".repeat(depth * 3) + c.name);
      const lane = el("div", "lane");
      const cend = c.end_ms < 0 ? stop : c.end_ms;
      const bar = el("div", "bar " + kindOf(c) + (c.end_ms < 0 ? " open" : ""));
      bar.style.left = ((c.start_ms - t.start_ms) / span * 100) + "%";
      bar.style.width = Math.max((cend - c.start_ms) / span * 100, 0.5) + "%";
      const ttfb = c.attrs["framewire.ttfb_ms"];
      bar.textContent = Math.round(cend - c.start_ms) + " ms" + (ttfb !== undefined ? " (ttfb " + Math.round(ttfb) + ")" : "");
      lane.append(bar);
      row.append(label, lane);
      box.append(row);
    }
    void end;
    return box;
  });
  $("turns").replaceChildren(...out);
}

function messages(id, list) {
  $(id).replaceChildren(...(list || []).slice(-50).reverse().map((m) => { const li = el("li", "", Math.round(m.at_ms) + " ms " + (m.type || "?") + "  " + m.preview); return li; }));
}

async function tick() {
  try {
    await refreshList();
    if (current) {
      const d = await get("api/sessions/" + encodeURIComponent(current));
      graph(d); turns(d); messages("rtvi-in", d.rtvi_in); messages("rtvi-out", d.rtvi_out);
    }
    $("status").textContent = "live";
  } catch (e) {
    $("status").textContent = String(e);
  }
}
$("sessions").addEventListener("change", (e) => { current = e.target.value; tick(); });
tick();
setInterval(tick, 1000);
