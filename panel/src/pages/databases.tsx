import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useBerth } from '../app.js';
import { ActionButton, ApiForm, ConfirmByName, Field, ListTable, sizeText } from '../ui.js';

/**
 * An account's MariaDB databases and users: created, a user granted a database, a database
 * deleted once its name is typed. A generated password is shown once, as the API returns it once.
 */
export function DatabasesSection({ accountId }: { accountId: string }) {
  const { berth } = useBerth();
  const queries = useQueryClient();
  const query = { params: { query: { account_id: accountId, limit: 100 } } };
  const databases = useQuery({
    queryKey: ['databases', accountId],
    queryFn: async () => (await berth.GET('/v1/databases', query)).data,
  });
  const users = useQuery({
    queryKey: ['database-users', accountId],
    queryFn: async () => (await berth.GET('/v1/database-users', query)).data,
  });
  const [deleting, setDeleting] = useState<string | null>(null);
  const [password, setPassword] = useState<{ username: string; password: string } | null>(null);
  const refresh = async () => {
    await queries.invalidateQueries({ queryKey: ['databases', accountId] });
    await queries.invalidateQueries({ queryKey: ['database-users', accountId] });
  };
  const options = (rows: { id: string; name?: string; username?: string }[] | undefined) =>
    (rows ?? []).map((r) => ({ value: r.id, label: r.name ?? r.username ?? r.id }));

  return (
    <section aria-labelledby="databases-title">
      <h2 id="databases-title">Databases</h2>
      <ListTable
        caption="Databases"
        rows={databases.data?.data}
        columns={[
          ['Name', (d) => d.name],
          ['Status', (d) => d.status],
          ['Size', (d) => (d.size_bytes === null ? '' : sizeText(d.size_bytes))],
          [
            'Actions',
            (d) => (
              <button type="button" aria-label={`Delete database ${d.name}`} onClick={() => setDeleting(d.name)}>
                Delete
              </button>
            ),
          ],
        ]}
      />
      {deleting && (
        <ConfirmByName
          name={deleting}
          action="Delete database"
          run={async () => {
            const database = databases.data?.data.find((d) => d.name === deleting);
            if (database) await berth.DELETE('/v1/databases/{database_id}', { params: { path: { database_id: database.id } } });
            setDeleting(null);
            await refresh();
          }}
        />
      )}
      <ApiForm
        label="New database"
        button="Create database"
        submit={async (v) => {
          await berth.POST('/v1/databases', { body: { account_id: accountId, name: v.name ?? '' } });
          await refresh();
        }}
      >
        {(errors) => <Field label="Database name (username_suffix)" name="name" errors={errors} />}
      </ApiForm>

      <ListTable
        caption="Database users"
        rows={users.data?.data}
        columns={[
          ['User', (u) => u.username],
          ['Grants', (u) => u.grants.map((g) => `${g.database}: ${g.privileges.join(' ')}`).join('; ')],
          [
            'Actions',
            (u) => (
              <ActionButton
                label={`Delete user ${u.username}`}
                text="Delete"
                run={() => berth.DELETE('/v1/database-users/{user_id}', { params: { path: { user_id: u.id } } })}
                done={refresh}
              />
            ),
          ],
        ]}
      />
      <ApiForm
        label="New database user"
        button="Create user"
        submit={async (v) => {
          const made = (
            await berth.POST('/v1/database-users', {
              body: { account_id: accountId, username: v.username ?? '', generate_password: true },
            })
          ).data;
          if (made?.password) setPassword({ username: made.username, password: made.password });
          await refresh();
        }}
      >
        {(errors) => <Field label="User name (username_suffix)" name="username" errors={errors} />}
      </ApiForm>
      {password && (
        <p role="status">
          The password of <strong>{password.username}</strong>, shown this once: <code>{password.password}</code>
        </p>
      )}
      <ApiForm
        label="Grant a database"
        button="Grant"
        submit={async (v) => {
          await berth.PUT('/v1/databases/{database_id}/users/{user_id}', {
            params: { path: { database_id: v.database_id ?? '', user_id: v.user_id ?? '' } },
            body: { privileges: ['ALL'] },
          });
          await refresh();
        }}
      >
        {(errors) => (
          <>
            <Field label="User" name="user_id" options={options(users.data?.data)} errors={errors} />
            <Field label="Database (all privileges)" name="database_id" options={options(databases.data?.data)} errors={errors} />
          </>
        )}
      </ApiForm>
    </section>
  );
}
