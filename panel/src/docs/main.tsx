import { StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { Reference, type Document } from './reference.js';
import '../base.css';
import './docs.css';

/** /docs: the API reference, read from the server's own published document. */
function Docs() {
  const [doc, setDoc] = useState<Document | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    fetch('/v1/openapi.json')
      .then(async (r) => {
        if (!r.ok) throw new Error(`The document could not be read (${r.status}).`);
        setDoc((await r.json()) as Document);
      })
      .catch((err: unknown) => setProblem(err instanceof Error ? err.message : String(err)));
  }, []);
  if (problem)
    return (
      <p className="problem" role="alert">
        {problem}
      </p>
    );
  return doc ? <Reference doc={doc} /> : <p>Loading the reference…</p>;
}

createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <Docs />
  </StrictMode>,
);
