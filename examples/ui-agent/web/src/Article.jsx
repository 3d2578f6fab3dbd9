import { article } from "./data.js";

// Article is the essay of the deixis scenario: select a paragraph and ask
// "explain this", or ask "where does it talk about problem solving?".
export function Article() {
  return (
    <div className="panel" id="article">
      <article className="essay" aria-labelledby="article-title">
        <h2 id="article-title">{article.title}</h2>
        <p className="byline" data-a11y-exclude="">
          {article.byline}
        </p>
        <p className="hint" data-a11y-exclude="">
          Select a paragraph and ask “Explain this”, or ask “Where does it talk about problem solving?”
        </p>
        {article.sections.map((s, i) => (
          <div className="essay-section" key={s.heading}>
            <h3 id={`essay-${i + 1}`}>{s.heading}</h3>
            <p id={`essay-p${i + 1}`}>{s.text}</p>
          </div>
        ))}
      </article>
    </div>
  );
}
