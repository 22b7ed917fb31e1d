import { BerthError } from '@berth/sdk';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { problemText, RECORD_TYPES } from '../api.js';
import { useBerth } from '../app.js';
import { ApiForm, Field, Problem } from '../ui.js';
import { ChangesSection } from './changes.js';
import { DnssecSection } from './dnssec.js';

type Change = { name: string; type: string; ttl: number; content: string };
type Diff = { created: Change[]; updated: Change[]; deleted: Change[] };

/**
 * A domain's DNS: its records (added, edited inline, deleted), a zone file imported after its
 * diff is seen, DNSSEC, change sets scheduled for later, and the zone's export.
 */
export function DomainPage({ name }: { name: string }) {
  const { berth } = useBerth();
  const queries = useQueryClient();
  const domain = { params: { path: { domain: name } } };
  const records = useQuery({
    queryKey: ['records', name],
    queryFn: async () =>
      (await berth.GET('/v1/domains/{domain}/records', { params: { path: { domain: name }, query: { limit: 200 } } })).data,
  });
  const refresh = () => queries.invalidateQueries({ queryKey: ['records', name] });
  const [editing, setEditing] = useState<string | null>(null);
  const [rowProblem, setRowProblem] = useState<string | null>(null);

  async function save(id: string, content: string, ttl: string) {
    try {
      await berth.PATCH('/v1/domains/{domain}/records/{record_id}', {
        params: { path: { domain: name, record_id: id } },
        body: { content, ttl: Number(ttl) },
      });
      setEditing(null);
      setRowProblem(null);
      await refresh();
    } catch (err) {
      setRowProblem(problemText(err));
    }
  }

  async function remove(id: string) {
    try {
      await berth.DELETE('/v1/domains/{domain}/records/{record_id}', { params: { path: { domain: name, record_id: id } } });
      await refresh();
    } catch (err) {
      setRowProblem(problemText(err));
    }
  }

  return (
    <section aria-labelledby="domain-title">
      <h1 id="domain-title">{name}</h1>
      <h2>Records</h2>
      <Problem error={records.error} />
      <Problem error={rowProblem} />
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Type</th>
            <th scope="col">TTL</th>
            <th scope="col">Content</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {records.data?.data.map((r) =>
            editing === r.id ? (
              <tr key={r.id}>
                <td>{r.name}</td>
                <td>{r.type}</td>
                <td colSpan={3}>
                  <form
                    aria-label={`Edit ${r.name} ${r.type}`}
                    className="inline"
                    onSubmit={(e) => {
                      e.preventDefault();
                      const f = new FormData(e.currentTarget);
                      void save(r.id, f.get('content') as string, f.get('ttl') as string);
                    }}
                  >
                    <label htmlFor={`ttl-${r.id}`}>TTL</label>
                    <input id={`ttl-${r.id}`} name="ttl" defaultValue={r.ttl} inputMode="numeric" size={6} />
                    <label htmlFor={`content-${r.id}`}>Content</label>
                    <input id={`content-${r.id}`} name="content" defaultValue={r.content} />
                    <button type="submit">Save</button>
                    <button type="button" onClick={() => setEditing(null)}>
                      Cancel
                    </button>
                  </form>
                </td>
              </tr>
            ) : (
              <tr key={r.id}>
                <td>{r.name}</td>
                <td>{r.type}</td>
                <td>{r.ttl}</td>
                <td className="content">{r.content}</td>
                <td>
                  {!r.managed && (
                    <>
                      <button type="button" onClick={() => setEditing(r.id)} aria-label={`Edit ${r.name} ${r.type} ${r.content}`}>
                        Edit
                      </button>
                      <button
                        type="button"
                        aria-label={`Delete ${r.name} ${r.type} ${r.content}`}
                        onClick={() => void remove(r.id)}
                      >
                        Delete
                      </button>
                    </>
                  )}
                </td>
              </tr>
            ),
          )}
        </tbody>
      </table>

      <h2>Add a record</h2>
      <ApiForm
        label="Add a record"
        button="Add record"
        submit={async (v) => {
          await berth.POST('/v1/domains/{domain}/records', {
            ...domain,
            body: {
              name: v.name ?? '',
              type: (v.type ?? 'A') as 'A',
              content: v.content ?? '',
              ...(v.ttl && { ttl: Number(v.ttl) }),
            },
          });
          await refresh();
        }}
      >
        {(errors) => (
          <>
            <Field label="Name" name="name" errors={errors} defaultValue="@" />
            <Field label="Type" name="type" errors={errors} options={RECORD_TYPES} />
            <Field label="TTL" name="ttl" errors={errors} />
            <Field label="Content" name="content" errors={errors} />
          </>
        )}
      </ApiForm>

      <ZoneImport name={name} onApplied={refresh} />
      <DnssecSection name={name} />
      <ChangesSection name={name} />
    </section>
  );
}

/** A zone file checked first (`dry_run`): its diff shown, then applied with the `If-Match` it was checked against. */
function ZoneImport({ name, onApplied }: { name: string; onApplied: () => Promise<unknown> }) {
  const [text, setText] = useState('');
  const [diff, setDiff] = useState<{ etag: string; changes: Diff } | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const { session } = useBerth();
  const put = async (dryRun: boolean, etag: string) => {
    const r = await fetch(`/v1/domains/${encodeURIComponent(name)}/zone?dry_run=${dryRun}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${session.token}`, 'content-type': 'text/dns', 'if-match': etag },
      body: text,
    });
    if (!r.ok) throw await BerthError.from(r);
    return (await r.json()) as Diff;
  };
  async function preview() {
    setProblem(null);
    try {
      // The zone as it is now: its ETag is what the import is checked, then applied, against.
      const exported = await fetch(`/v1/domains/${encodeURIComponent(name)}/zone`, {
        headers: { authorization: `Bearer ${session.token}`, accept: 'text/dns' },
      });
      if (!exported.ok) throw await BerthError.from(exported);
      const etag = exported.headers.get('etag') ?? '';
      setDiff({ etag, changes: await put(true, etag) });
    } catch (err) {
      setProblem(problemText(err));
    }
  }
  async function apply() {
    if (!diff) return;
    try {
      await put(false, diff.etag);
      setDiff(null);
      setText('');
      await onApplied();
    } catch (err) {
      setProblem(problemText(err));
    }
  }
  const line = (c: Change) => `${c.name} ${c.ttl} ${c.type} ${c.content}`;
  return (
    <>
      <h2>Import a zone file</h2>
      <label htmlFor="zone-file">Zone file</label>
      <textarea id="zone-file" rows={8} value={text} onChange={(e) => setText(e.target.value)} />
      <div className="actions">
        <button type="button" onClick={() => void preview()} disabled={!text.trim()}>
          Show the changes
        </button>
      </div>
      <Problem error={problem} />
      {diff && (
        <div aria-label="Changes to apply" role="region">
          <ul className="diff">
            {diff.changes.created.map((c) => (
              <li key={`+${line(c)}`} className="added">
                + {line(c)}
              </li>
            ))}
            {diff.changes.updated.map((c) => (
              <li key={`~${line(c)}`} className="changed">
                ~ {line(c)}
              </li>
            ))}
            {diff.changes.deleted.map((c) => (
              <li key={`-${line(c)}`} className="removed">
                − {line(c)}
              </li>
            ))}
          </ul>
          <button type="button" onClick={() => void apply()}>
            Apply these changes
          </button>
        </div>
      )}
    </>
  );
}
