import { useEffect, useRef, useState } from "react";
import { phones } from "./data.js";

// Catalog is the product grid of the pointing scenario: a list whose
// aria-colcount tracks the rendered columns, so the agent can say "row 4,
// column 2" ([cols=N] in <ui_state>).
export function Catalog({ cart, setCart }) {
  const gridRef = useRef(null);
  const [cols, setCols] = useState(4);

  useEffect(() => {
    const grid = gridRef.current;
    if (!grid) return undefined;
    const measure = () => {
      const n = getComputedStyle(grid).gridTemplateColumns.split(" ").filter(Boolean).length;
      if (n > 0) setCols(n);
    };
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(grid);
    return () => ro.disconnect();
  }, []);

  const toggle = (name) => setCart((c) => (c.includes(name) ? c.filter((x) => x !== name) : [...c, name]));

  return (
    <section className="panel" aria-labelledby="phones-title" id="phones">
      <div className="panel-head">
        <h2 id="phones-title">Phones</h2>
        <p className="hint" data-a11y-exclude="">
          Ask: “Where is the iPhone 17?”, “Which phones are from Google?”, “Scroll back to the top”.
        </p>
      </div>
      <ul className="grid" ref={gridRef} aria-label="Phone catalog" aria-colcount={cols}>
        {phones.map((p) => {
          const inCart = cart.includes(p.name);
          return (
            <li key={p.name} className="card" aria-label={p.name} id={`phone-${slug(p.name)}`}>
              <div className="card-art" aria-hidden="true" style={{ "--hue": p.hue }}>
                <div className="phone-shape">
                  <span className="camera" />
                </div>
              </div>
              <h3>{p.name}</h3>
              <p className="meta">{`${p.brand} · ${p.screen} display · $${p.price.toLocaleString("en-US")}`}</p>
              <button
                type="button"
                className={`btn btn-small ${inCart ? "btn-done" : ""}`}
                aria-label={inCart ? `Remove ${p.name} from cart` : `Add ${p.name} to cart`}
                onClick={() => toggle(p.name)}
              >
                {inCart ? "In cart ✓" : "Add to cart"}
              </button>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

function slug(s) {
  return s.toLowerCase().replace(/[^a-z0-9]+/g, "-");
}
