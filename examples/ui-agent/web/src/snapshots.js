// snapshots.js watches the ui-snapshot messages the client sends, so the
// page can wait until the server has seen the user's selection before it
// sends a typed "explain this" (see Assistant.jsx), and the end-to-end
// test can count them.
const listeners = new Set();

// watchSnapshots wraps transport.sendMessage to observe ui-snapshot
// messages; everything is still sent as before.
export function watchSnapshots(transport, demo) {
  const send = transport.sendMessage.bind(transport);
  transport.sendMessage = (message) => {
    if (message?.type === "ui-snapshot") {
      const tree = message.data?.tree;
      demo.snapshots = (demo.snapshots ?? 0) + 1;
      demo.lastSelection = tree?.selection ?? null;
      listeners.forEach((fn) => fn(tree));
    }
    return send(message);
  };
}

// nextSnapshot resolves true with the first snapshot sent from now on for
// which match returns true, or false after timeoutMs.
export function nextSnapshot(match, timeoutMs) {
  return new Promise((resolve) => {
    const done = (ok) => {
      clearTimeout(timer);
      listeners.delete(fn);
      resolve(ok);
    };
    const fn = (tree) => {
      if (match(tree)) done(true);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    listeners.add(fn);
  });
}
