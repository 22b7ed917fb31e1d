import { BerthError } from '@berth/sdk';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useBerth } from '../app.js';
import { Problem } from '../ui.js';

/**
 * A zone's DNSSEC: signed on request, the DS records to hand to the registrar, the parent asked
 * whether it publishes them; unsigned, which the API refuses while the DS is published unless
 * forced (the zone then asks the parent to remove it, RFC 8078, and stays signed until it has,
 * and for the DS's TTL after, while resolvers may still hold it).
 */
export function DnssecSection({ name }: { name: string }) {
  const { berth } = useBerth();
  const queries = useQueryClient();
  const domain = { params: { path: { domain: name } } };
  const state = useQuery({
    queryKey: ['dnssec', name],
    queryFn: async () => (await berth.GET('/v1/domains/{domain}/dnssec', domain)).data,
  });
  const [problem, setProblem] = useState<unknown>(null);
  // The stable code, never the message, says that forcing is what would help.
  const forceable = problem instanceof BerthError && problem.code === 'ds_still_published';

  async function act(call: () => Promise<{ operation?: { id: string } | null } | undefined>) {
    setProblem(null);
    try {
      const op = (await call())?.operation;
      if (op) await berth.operations.wait(op.id, { intervalMs: 500 });
    } catch (err) {
      setProblem(err);
    } finally {
      await queries.invalidateQueries({ queryKey: ['dnssec', name] });
    }
  }
  const put = (body: { enabled: boolean; force?: boolean }) => async () =>
    (await berth.PUT('/v1/domains/{domain}/dnssec', { ...domain, body })).data;
  const check = async () => (await berth.POST('/v1/domains/{domain}/dnssec/check', domain)).data;

  const s = state.data;
  if (!s) return <Problem error={state.error} />;
  return (
    <section aria-labelledby="dnssec-title">
      <h2 id="dnssec-title">DNSSEC</h2>
      <p role="status">
        DNSSEC: <strong>{s.status}</strong>
        {s.error && ` (${s.error.detail})`}
      </p>
      {s.status === 'pending_disable' && (
        <p>
          Signed until the parent has been without the DS for its TTL, as long as resolvers may hold it. Berth looks every hour,
          or now with the button.
        </p>
      )}
      {s.ds_records.length > 0 && (
        <>
          <p>The DS records to give the registrar:</p>
          <pre aria-label="DS records">{s.ds_records.map((ds) => ds.record).join('\n')}</pre>
        </>
      )}
      <div className="actions">
        {s.status === 'disabled' || s.status === 'error' ? (
          <button type="button" onClick={() => void act(put({ enabled: true }))}>
            Sign the zone
          </button>
        ) : (
          <>
            <button type="button" onClick={() => void act(check)}>
              Look for the DS at the parent
            </button>
            {s.status !== 'pending_disable' && (
              <button type="button" onClick={() => void act(put({ enabled: false }))}>
                Unsign the zone
              </button>
            )}
          </>
        )}
        {forceable && (
          <button type="button" className="danger" onClick={() => void act(put({ enabled: false, force: true }))}>
            Unsign once the parent removes the DS
          </button>
        )}
      </div>
      <Problem error={problem} />
    </section>
  );
}
