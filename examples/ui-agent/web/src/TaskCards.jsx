import { useUIJobGroups } from "@pipecat-ai/client-react";

// TaskCards shows the job groups the server started (ui-job-group
// envelopes, through UIJobGroupsProvider), one card per group with a row
// per worker and a Cancel button while the group runs.
export function TaskCards() {
  const { groups, cancelJobGroup, dismissJobGroup } = useUIJobGroups();
  return (
    <section className="tasks" aria-labelledby="tasks-title">
      <h2 id="tasks-title">Tasks</h2>
      {groups.length === 0 ? (
        <p className="empty" data-a11y-exclude="">
          No tasks yet. Try “Compare prices for the iPhone 17”.
        </p>
      ) : (
        <ul className="task-list" aria-label="Task groups">
          {[...groups].reverse().map((g) => {
            const label = g.label || "Task group";
            return (
              <li key={g.jobId} className={`task-card status-${g.status}`} aria-label={label} data-job-id={g.jobId}>
                <div className="task-head">
                  <h3>{label}</h3>
                  <span className={`pill pill-${g.status}`}>{statusText(g.status)}</span>
                </div>
                <ul className="workers" aria-label={`Workers of ${label}`}>
                  {g.jobs.map((j) => (
                    <li key={j.workerName} className={`worker worker-${j.status}`}>
                      <span className="worker-name">{j.workerName}</span>
                      <span className={`pill pill-${j.status}`}>{statusText(j.status)}</span>
                      <span className="worker-note">{workerNote(j)}</span>
                      {j.status === "running" && <span className="progress" aria-hidden="true" />}
                    </li>
                  ))}
                </ul>
                <div className="task-actions">
                  {g.status === "running" && g.cancellable && (
                    <button type="button" className="btn btn-small btn-danger" aria-label={`Cancel ${label}`} onClick={() => cancelJobGroup(g.jobId, "cancelled by user")}>
                      Cancel
                    </button>
                  )}
                  {g.status !== "running" && (
                    <button type="button" className="btn btn-small btn-ghost" aria-label={`Dismiss ${label}`} onClick={() => dismissJobGroup(g.jobId)}>
                      Dismiss
                    </button>
                  )}
                </div>
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}

function statusText(s) {
  return { running: "running", completed: "done", cancelled: "cancelled", failed: "failed", error: "error" }[s] ?? s;
}

function workerNote(job) {
  if (job.status !== "running" && job.response != null) {
    const r = job.response;
    if (typeof r === "string") return r;
    if (r && typeof r === "object" && typeof r.summary === "string") return r.summary;
    return JSON.stringify(r);
  }
  const last = job.updates[job.updates.length - 1];
  if (!last) return job.status === "running" ? "starting…" : "";
  const d = last.data;
  if (typeof d === "string") return d;
  if (d && typeof d === "object" && typeof d.text === "string") return d.text;
  return JSON.stringify(d);
}
