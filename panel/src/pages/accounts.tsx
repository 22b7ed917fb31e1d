import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useBerth } from '../app.js';
import { ApiForm, Field, Problem } from '../ui.js';

const STATUSES = ['', 'provisioning', 'active', 'suspended', 'terminating', 'failed'];

/** Accounts: searched, filtered by status, a page at a time (the API's cursors), and created. */
export function AccountsPage() {
  const { berth, session } = useBerth();
  const queries = useQueryClient();
  const [q, setQ] = useState('');
  const [status, setStatus] = useState('');
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const list = useQuery({
    queryKey: ['accounts', q, status, cursor],
    queryFn: async () =>
      (
        await berth.GET('/v1/accounts', {
          params: {
            query: { limit: 20, ...(q && { q }), ...(status && { status: status as 'active' }), ...(cursor && { cursor }) },
          },
        })
      ).data,
  });
  const plans = useQuery({
    queryKey: ['plans'],
    queryFn: async () => (await berth.GET('/v1/plans', { params: { query: { limit: 100 } } })).data,
    enabled: !session.accountId,
  });
  const create = useMutation({
    mutationFn: async (v: Record<string, string>) =>
      (
        await berth.POST('/v1/accounts', {
          body: { username: v.username ?? '', contact_email: v.contact_email ?? '', plan_id: v.plan_id ?? '' },
        })
      ).data,
    onSuccess: () => queries.invalidateQueries({ queryKey: ['accounts'] }),
  });

  return (
    <section aria-labelledby="accounts-title">
      <h1 id="accounts-title">Accounts</h1>
      <div className="filters" role="search">
        <label htmlFor="account-search">Search</label>
        <input
          id="account-search"
          type="search"
          value={q}
          onChange={(e) => {
            setQ(e.target.value);
            setCursors([]);
          }}
        />
        <label htmlFor="account-status">Status</label>
        <select
          id="account-status"
          value={status}
          onChange={(e) => {
            setStatus(e.target.value);
            setCursors([]);
          }}
        >
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {s || 'any'}
            </option>
          ))}
        </select>
      </div>
      <Problem error={list.error} />
      <table>
        <thead>
          <tr>
            <th scope="col">Username</th>
            <th scope="col">Status</th>
            <th scope="col">Contact</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {list.data?.data.map((a) => (
            <tr key={a.id}>
              <td>
                <a href={`#/accounts/${a.id}`}>{a.username}</a>
              </td>
              <td>{a.status}</td>
              <td>{a.contact_email}</td>
              <td>{new Date(a.created_at).toLocaleDateString()}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="pager">
        <button type="button" disabled={!cursors.length} onClick={() => setCursors(cursors.slice(0, -1))}>
          Previous page
        </button>
        <button
          type="button"
          disabled={!list.data?.next_cursor}
          onClick={() => list.data?.next_cursor && setCursors([...cursors, list.data.next_cursor])}
        >
          Next page
        </button>
      </div>
      {!session.accountId && (
        <>
          <h2>New account</h2>
          <ApiForm label="New account" button="Create account" submit={(v) => create.mutateAsync(v)}>
            {(errors) => (
              <>
                <Field label="Username" name="username" errors={errors} required />
                <Field label="Contact email" name="contact_email" type="email" errors={errors} required />
                <Field
                  label="Plan"
                  name="plan_id"
                  errors={errors}
                  options={(plans.data?.data ?? []).map((p) => ({ value: p.id, label: p.name }))}
                />
              </>
            )}
          </ApiForm>
        </>
      )}
    </section>
  );
}
