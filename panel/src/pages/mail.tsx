import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useBerth } from '../app.js';
import { ActionButton, ApiForm, Field, ListTable } from '../ui.js';

/** An account's mailboxes and forwarders: listed, created, deleted. */
export function MailSection({ accountId }: { accountId: string }) {
  const { berth } = useBerth();
  const queries = useQueryClient();
  const query = { params: { query: { account_id: accountId, limit: 100 } } };
  const emails = useQuery({
    queryKey: ['emails', accountId],
    queryFn: async () => (await berth.GET('/v1/emails', query)).data,
  });
  const forwarders = useQuery({
    queryKey: ['email-forwarders', accountId],
    queryFn: async () => (await berth.GET('/v1/email-forwarders', query)).data,
  });
  const refresh = () => queries.invalidateQueries({ queryKey: ['email-forwarders', accountId] });

  return (
    <section aria-labelledby="mail-title">
      <h2 id="mail-title">Mail</h2>
      <ul aria-label="Mailboxes">
        {emails.data?.data.map((m) => (
          <li key={m.id}>{m.address}</li>
        ))}
      </ul>
      <ApiForm
        label="New mailbox"
        button="Create mailbox"
        submit={async (v) => {
          await berth.POST('/v1/emails', { body: { address: v.address ?? '', password: v.password ?? '' } });
          await queries.invalidateQueries();
        }}
      >
        {(errors) => (
          <>
            <Field label="Address" name="address" errors={errors} />
            <Field label="Password" name="password" type="password" errors={errors} />
          </>
        )}
      </ApiForm>

      <ListTable
        caption="Forwarders"
        rows={forwarders.data?.data}
        columns={[
          ['Address', (f) => f.address],
          ['Delivers to', (f) => f.destinations.join(', ')],
          [
            'Actions',
            (f) => (
              <ActionButton
                label={`Delete forwarder ${f.address}`}
                text="Delete"
                run={() => berth.DELETE('/v1/email-forwarders/{forwarder_id}', { params: { path: { forwarder_id: f.id } } })}
                done={refresh}
              />
            ),
          ],
        ]}
      />
      <ApiForm
        label="New forwarder"
        button="Create forwarder"
        submit={async (v) => {
          const destinations = (v.destinations ?? '').split(/[\s,]+/).filter(Boolean);
          await berth.POST('/v1/email-forwarders', { body: { address: v.address ?? '', destinations } });
          await refresh();
        }}
      >
        {(errors) => (
          <>
            <Field label="Forwarder address" name="address" errors={errors} />
            <Field label="Delivers to (addresses, comma-separated)" name="destinations" errors={errors} />
          </>
        )}
      </ApiForm>
    </section>
  );
}
