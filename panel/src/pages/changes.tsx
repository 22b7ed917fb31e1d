import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { download, problemText, RECORD_TYPES } from '../api.js';
import { useBerth } from '../app.js';
import { ActionButton, ApiForm, Field, ListTable, Problem } from '../ui.js';

/** A zone's change sets scheduled for later (applied then, all or nothing), and its export as a zone file. */
export function ChangesSection({ name }: { name: string }) {
  const { berth, session } = useBerth();
  const queries = useQueryClient();
  const changes = useQuery({
    queryKey: ['changes', name],
    queryFn: async () =>
      (await berth.GET('/v1/domains/{domain}/changes', { params: { path: { domain: name }, query: { limit: 50 } } })).data,
  });
  const refresh = () => queries.invalidateQueries({ queryKey: ['changes', name] });
  const [problem, setProblem] = useState<string | null>(null);

  return (
    <section aria-labelledby="changes-title">
      <h2 id="changes-title">Scheduled changes</h2>
      <ListTable
        caption="Change sets"
        rows={changes.data?.data}
        columns={[
          ['Applies at', (c) => c.apply_at ?? c.applied_at ?? ''],
          ['Status', (c) => c.status],
          ['Adds', (c) => c.create.map((r) => `${r.name} ${r.type} ${r.content}`).join('; ')],
          [
            'Actions',
            (c) =>
              c.status === 'scheduled' && (
                <ActionButton
                  label={`Cancel the change set ${c.id}`}
                  text="Cancel"
                  run={() =>
                    berth.DELETE('/v1/domains/{domain}/changes/{change_id}', {
                      params: { path: { domain: name, change_id: c.id } },
                    })
                  }
                  done={refresh}
                />
              ),
          ],
        ]}
      />
      <ApiForm
        label="Schedule a record"
        button="Schedule"
        submit={async (v) => {
          // The browser's local time, as the person typed it, sent as an instant.
          const applyAt = v.apply_at ? new Date(v.apply_at).toISOString() : null;
          await berth.POST('/v1/domains/{domain}/changes', {
            params: { path: { domain: name } },
            body: {
              apply_at: applyAt,
              create: [{ name: v.name ?? '', type: (v.type ?? 'A') as 'A', content: v.content ?? '' }],
            },
          });
          await refresh();
          await queries.invalidateQueries({ queryKey: ['records', name] });
        }}
      >
        {(errors) => (
          <>
            <Field label="At (your local time)" name="apply_at" type="datetime-local" errors={errors} />
            <Field label="Record name" name="name" errors={errors} />
            <Field label="Record type" name="type" options={RECORD_TYPES} errors={errors} />
            <Field label="Record content" name="content" errors={errors} />
          </>
        )}
      </ApiForm>

      <h2>Export</h2>
      <button
        type="button"
        onClick={() => {
          setProblem(null);
          download(`/v1/domains/${encodeURIComponent(name)}/zone`, session.token, {
            name: `${name}.zone`,
            type: 'text/dns',
          }).catch((err: unknown) => setProblem(problemText(err)));
        }}
      >
        Download the zone file
      </button>
      <Problem error={problem} />
    </section>
  );
}
