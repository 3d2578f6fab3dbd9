import { useRef, useState } from "react";
import { form } from "./data.js";

// ApplicationForm is the form-fill scenario: the agent fills fields with
// set_input_value, reads them back from the snapshot, and clicks Submit.
// The inputs are uncontrolled, so values written by the default command
// handler need no React plumbing.
export function ApplicationForm() {
  const ref = useRef(null);
  const [status, setStatus] = useState("");

  const onSubmit = (e) => {
    e.preventDefault();
    const data = new FormData(ref.current);
    const first = String(data.get("first-name") || "").trim();
    setStatus(`Application sent${first ? `. Thanks, ${first}!` : "."} (Nothing leaves this demo.)`);
  };

  return (
    <section className="panel" aria-labelledby="form-title" id="apply">
      <div className="panel-head">
        <h2 id="form-title">Job application: {form.role}</h2>
        <p className="hint" data-a11y-exclude="">
          Say or type “My name is Ada Lovelace and my email is ada@example.com”, “What have I entered?”, “Submit”.
        </p>
      </div>
      <form ref={ref} role="form" aria-labelledby="form-title" className="application" onSubmit={onSubmit} onReset={() => setStatus("")}>
        <div className="fields">
          {form.fields.map((f) => (
            <div className={`field ${f.multiline ? "field-wide" : ""}`} key={f.id}>
              <label htmlFor={f.id} className={f.required ? "required" : undefined}>
                {f.label}
              </label>
              {f.multiline ? (
                <textarea id={f.id} name={f.id} rows={3} />
              ) : (
                <input
                  id={f.id}
                  name={f.id}
                  type={f.type ?? "text"}
                  autoComplete={f.autoComplete}
                  required={f.required}
                  min={f.min}
                  max={f.max}
                />
              )}
            </div>
          ))}
        </div>
        <div className="form-actions">
          <button type="submit" className="btn btn-primary">
            Submit application
          </button>
          <button type="reset" className="btn btn-ghost" data-a11y-exclude="">
            Clear
          </button>
        </div>
        <p className="form-status" role="status">
          {status}
        </p>
      </form>
    </section>
  );
}
