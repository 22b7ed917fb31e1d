import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useBerth } from '../app.js';
import { ApiForm, ConfirmByName, Field, Problem, sizeText } from '../ui.js';
import { AccessSection } from './access.js';
import { BackupsSection } from './backups.js';
import { DatabasesSection } from './databases.js';
import { MailSection } from './mail.js';
import { MoveForm } from './servers.js';

/** One account: its usage, suspension, termination, login link, domains, sites, mail, databases, access and backups. */
export function AccountPage({ id }: { id: string }) {
  const { berth, session } = useBerth();
  const queries = useQueryClient();
  const path = { params: { path: { account_id: id } } };
  const account = useQuery({
    queryKey: ['account', id],
    queryFn: async () => (await berth.GET('/v1/accounts/{account_id}', path)).data,
  });
  const domains = useQuery({
    queryKey: ['domains', id],
    queryFn: async () => (await berth.GET('/v1/domains', { params: { query: { account_id: id, limit: 100 } } })).data,
  });
  const sites = useQuery({
    queryKey: ['sites', id],
    queryFn: async () => (await berth.GET('/v1/sites', { params: { query: { account_id: id, limit: 100 } } })).data,
  });
  const refresh = () => queries.invalidateQueries();
  const [link, setLink] = useState<string | null>(null);
  const action = useMutation({
    mutationFn: async (what: 'suspend' | 'unsuspend' | 'login-link') => {
      if (what === 'suspend')
        await berth.POST('/v1/accounts/{account_id}/suspend', { ...path, body: { reason: 'Suspended from the panel' } });
      if (what === 'unsuspend') await berth.POST('/v1/accounts/{account_id}/unsuspend', path);
      if (what === 'login-link') setLink((await berth.POST('/v1/accounts/{account_id}/login-links', path)).data?.url ?? null);
    },
    onSuccess: refresh,
  });

  const a = account.data;
  if (account.error) return <Problem error={account.error} />;
  if (!a) return <p>Loading…</p>;
  return (
    <section aria-labelledby="account-title">
      <h1 id="account-title">{a.username}</h1>
      <dl className="facts">
        <dt>Status</dt>
        <dd>{a.status}</dd>
        <dt>Disk</dt>
        <dd>{sizeText(a.usage?.disk_bytes ?? 0)}</dd>
        <dt>Bandwidth this month</dt>
        <dd>{sizeText(a.usage?.bandwidth_bytes ?? 0)}</dd>
        <dt>Domains</dt>
        <dd>
          {a.usage?.domains ?? 0} of {a.limits.max_domains}
        </dd>
        <dt>Mailboxes</dt>
        <dd>
          {a.usage?.email_accounts ?? 0} of {a.limits.max_email_accounts}
        </dd>
      </dl>
      <Problem error={action.error} />
      <div className="actions">
        {a.status === 'suspended' ? (
          <button type="button" onClick={() => action.mutate('unsuspend')}>
            Resume
          </button>
        ) : (
          <button type="button" onClick={() => action.mutate('suspend')}>
            Suspend
          </button>
        )}
        {!session.accountId && (
          <button type="button" onClick={() => action.mutate('login-link')}>
            Make a login link
          </button>
        )}
      </div>
      {link && (
        <p>
          Login link (single use, 60 s): <a href={link}>{link}</a>
        </p>
      )}

      <h2>Domains</h2>
      <ul>
        {domains.data?.data.map((d) => (
          <li key={d.id}>
            <a href={`#/domains/${d.name}`}>{d.name}</a> ({d.status})
          </li>
        ))}
      </ul>
      <ApiForm
        label="Add a domain"
        button="Add domain"
        submit={async (v) => {
          await berth.POST('/v1/domains', {
            body: { account_id: id, name: v.name ?? '', mail_enabled: v.mail_enabled === 'on' },
          });
          await refresh();
        }}
      >
        {(errors) => (
          <>
            <Field label="Domain name" name="name" errors={errors} />
            <div className="field checkbox">
              <input id="f-mail_enabled" name="mail_enabled" type="checkbox" defaultChecked />
              <label htmlFor="f-mail_enabled">Receive mail for it</label>
            </div>
          </>
        )}
      </ApiForm>

      <h2>Sites</h2>
      <ul>
        {sites.data?.data.map((site) => (
          <li key={site.id}>
            <a href={`#/sites/${site.id}`}>{site.hostname}</a> ({site.status})
          </li>
        ))}
      </ul>
      <ApiForm
        label="New site"
        button="Create site"
        submit={async (v) => {
          await berth.POST('/v1/sites', { body: { account_id: id, hostname: v.hostname ?? '' } });
          await refresh();
        }}
      >
        {(errors) => <Field label="Hostname" name="hostname" errors={errors} />}
      </ApiForm>

      <MailSection accountId={id} />
      <DatabasesSection accountId={id} />
      <AccessSection accountId={id} />
      <BackupsSection accountId={id} username={a.username} />

      {!session.accountId && (
        <>
          <h2>Server</h2>
          <MoveForm accountId={id} current={a.placement.web} />
        </>
      )}

      {!session.accountId && a.status !== 'terminating' && (
        <>
          <h2>Terminate</h2>
          <ConfirmByName
            name={a.username}
            action="Terminate account"
            run={async () => {
              await berth.DELETE('/v1/accounts/{account_id}', path);
              location.hash = '#/';
            }}
          />
        </>
      )}
    </section>
  );
}
