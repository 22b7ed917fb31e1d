import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useBerth } from '../app.js';
import { ActionButton, ApiForm, Field, ListTable, sizeText } from '../ui.js';

/** How often the fleet's pages look again: a move's progress and a server's heartbeat change by themselves. */
const REFRESH_MS = 2_000;

/** The fleet's servers; `refetchInterval` where their heartbeats are watched. */
const useServers = (refetchInterval?: number) => {
  const { berth } = useBerth();
  return useQuery({
    queryKey: ['servers'],
    queryFn: async () => (await berth.GET('/v1/servers', { params: { query: { limit: 200 } } })).data,
    refetchInterval,
  });
};

/** The fleet (operator and reseller tokens): the servers with their units, and the moves under way or done. */
export function ServersPage() {
  const { berth } = useBerth();
  const queries = useQueryClient();
  const servers = useServers(REFRESH_MS);
  const moves = useQuery({
    queryKey: ['moves'],
    queryFn: async () => (await berth.GET('/v1/moves', { params: { query: { limit: 100 } } })).data,
    refetchInterval: REFRESH_MS,
  });
  const nameOf = (id: string | undefined) => servers.data?.data.find((s) => s.id === id)?.name ?? id ?? '';
  const refresh = () => queries.invalidateQueries({ queryKey: ['moves'] });

  return (
    <section aria-labelledby="servers-title">
      <h1 id="servers-title">Servers</h1>
      <ListTable
        caption="Servers"
        rows={servers.data?.data}
        columns={[
          ['Name', (s) => s.name],
          ['Roles', (s) => s.roles.join(', ')],
          ['Status', (s) => s.status],
          ['IPv4', (s) => s.ipv4 ?? ''],
          ['Accounts', (s) => s.usage.accounts],
          ['Units', (s) => `${s.units.in_sync} in sync, ${s.units.pending} pending, ${s.units.error} failed`],
          ['Last seen', (s) => (s.local ? 'this process' : (s.last_seen_at ?? 'never'))],
        ]}
      />

      <h2>Moves</h2>
      <ListTable
        caption="Moves"
        rows={moves.data?.data}
        columns={[
          ['Account', (m) => <a href={`#/accounts/${m.account_id}`}>{m.account_id}</a>],
          ['From', (m) => nameOf(m.from.web)],
          ['To', (m) => nameOf(m.to.web ?? m.to.mail ?? m.to.database)],
          ['Status', (m) => m.status],
          [
            'Copied',
            (m) => (
              <>
                <progress aria-label={`Copied of ${m.id}`} max={m.bytes_total || 1} value={m.bytes_copied} />{' '}
                {sizeText(m.bytes_copied)} of {sizeText(m.bytes_total)}
              </>
            ),
          ],
          [
            'Actions',
            (m) => {
              const move = { params: { path: { move_id: m.id } } };
              return (
                <>
                  {m.status === 'ready' && (
                    <ActionButton
                      label={`Cut over ${m.id}`}
                      text="Cut over"
                      run={() => berth.POST('/v1/moves/{move_id}/cutover', move)}
                      done={refresh}
                    />
                  )}
                  {['queued', 'copying', 'ready'].includes(m.status) && (
                    <ActionButton
                      label={`Cancel ${m.id}`}
                      text="Cancel"
                      run={() => berth.POST('/v1/moves/{move_id}/cancel', move)}
                      done={refresh}
                    />
                  )}
                </>
              );
            },
          ],
        ]}
      />
    </section>
  );
}

/** An account moved, every role, to one server of the fleet. */
export function MoveForm({ accountId, current }: { accountId: string; current: string }) {
  const { berth } = useBerth();
  const queries = useQueryClient();
  const servers = useServers();
  const targets = (servers.data?.data ?? []).filter((s) => s.id !== current).map((s) => ({ value: s.id, label: s.name }));
  if (targets.length === 0) return null;
  return (
    <ApiForm
      label="Move the account"
      button="Move"
      submit={async (v) => {
        const to = v.server ?? '';
        await berth.POST('/v1/accounts/{account_id}/move', {
          params: { path: { account_id: accountId } },
          body: { to: { web: to, mail: to, database: to }, cutover: v.cutover === 'manual' ? 'manual' : 'auto' },
        });
        await queries.invalidateQueries({ queryKey: ['moves'] });
        location.hash = '#/servers';
      }}
    >
      {(errors) => (
        <>
          <Field label="To the server" name="server" options={targets} errors={errors} />
          <Field
            label="Cut over"
            name="cutover"
            options={[
              { value: 'auto', label: 'as soon as the copy is ready' },
              { value: 'manual', label: 'when I say so (the move waits in ready)' },
            ]}
            errors={errors}
          />
        </>
      )}
    </ApiForm>
  );
}
