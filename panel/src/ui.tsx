import { useId, useState, type FormEvent, type ReactNode } from 'react';
import { fieldErrors, problemText } from './api.js';

/**
 * A labelled input (a select when given `options`) whose API field error, from the problem's
 * `errors[].pointer`, shows beside it.
 */
export function Field(p: {
  label: string;
  name: string;
  errors: Record<string, string>;
  type?: string;
  defaultValue?: string;
  required?: boolean;
  options?: { value: string; label: string }[];
}) {
  // Unique on the page: two forms may each have an `address`.
  const id = useId();
  const error = p.errors[p.name];
  const common = {
    id,
    name: p.name,
    defaultValue: p.defaultValue,
    required: p.required,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': error ? `${id}-error` : undefined,
  };
  return (
    <div className="field">
      <label htmlFor={id}>{p.label}</label>
      {p.options ? (
        <select {...common}>
          {p.options.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      ) : (
        <input {...common} type={p.type ?? 'text'} />
      )}
      {error && (
        <span id={`${id}-error`} className="field-error" role="alert">
          {error}
        </span>
      )}
    </div>
  );
}

/**
 * A form that sends its fields to `submit`; a problem is shown where it belongs: field errors
 * beside their fields, the rest above the button.
 */
export function ApiForm(p: {
  label: string;
  submit: (values: Record<string, string>) => Promise<unknown>;
  children: (errors: Record<string, string>) => ReactNode;
  button: string;
}) {
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = e.currentTarget;
    const values = Object.fromEntries([...new FormData(form)].map(([k, v]) => [k, typeof v === 'string' ? v : v.name]));
    setBusy(true);
    try {
      await p.submit(values);
      setErrors({});
      setProblem(null);
      form.reset();
    } catch (err) {
      const isField = (name: string) => form.elements.namedItem(name) !== null;
      const fields = fieldErrors(err, isField);
      setErrors(fields);
      // An error of a field this form does not show is told above the button with the rest.
      const shown = Object.keys(fields).length > 0 && Object.keys(fields).every(isField);
      setProblem(shown ? null : problemText(err));
    } finally {
      setBusy(false);
    }
  }
  return (
    <form aria-label={p.label} onSubmit={(e) => void onSubmit(e)} noValidate>
      {p.children(errors)}
      <Problem error={problem} />
      <button type="submit" disabled={busy}>
        {p.button}
      </button>
    </form>
  );
}

/** A destructive action, confirmed by typing the resource's name. */
export function ConfirmByName(p: { name: string; action: string; run: () => Promise<unknown> }) {
  const [typed, setTyped] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const id = useId();
  return (
    <form
      aria-label={p.action}
      onSubmit={(e) => {
        e.preventDefault();
        p.run().catch((err: unknown) => setProblem(problemText(err)));
      }}
    >
      <label htmlFor={id}>
        Type <strong>{p.name}</strong> to {p.action.toLowerCase()}
      </label>
      <input id={id} value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" />
      <button type="submit" className="danger" disabled={typed !== p.name}>
        {p.action}
      </button>
      <Problem error={problem} />
    </form>
  );
}

export const Problem = ({ error }: { error: unknown }) =>
  error ? (
    <p className="problem" role="alert">
      {problemText(error)}
    </p>
  ) : null;

/** Bytes as people read them. */
export const sizeText = (n: number) => (n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`);

/** A table of a list's rows, one column per [heading, cell]; the caption names it for screen readers. */
export function ListTable<T extends { id: string }>(p: {
  caption: string;
  rows: T[] | undefined;
  columns: [string, (row: T) => ReactNode][];
}) {
  return (
    <table>
      <caption>{p.caption}</caption>
      <thead>
        <tr>
          {p.columns.map(([heading]) => (
            <th key={heading} scope="col">
              {heading}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {p.rows?.map((row) => (
          <tr key={row.id}>
            {p.columns.map(([heading, cell]) => (
              <td key={heading}>{cell(row)}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A button that runs one call and shows its problem beside itself; `done` refreshes what it changed. */
export function ActionButton(p: { label: string; text: string; run: () => Promise<unknown>; done?: () => unknown }) {
  const [problem, setProblem] = useState<unknown>(null);
  return (
    <>
      <button
        type="button"
        aria-label={p.label}
        onClick={() => {
          setProblem(null);
          p.run()
            .then(p.done)
            .catch((err: unknown) => setProblem(err));
        }}
      >
        {p.text}
      </button>
      <Problem error={problem} />
    </>
  );
}
