import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useBerth } from '../app.js';
import { ActionButton, ApiForm, Field, ListTable } from '../ui.js';

const ACCESS = [
  { value: 'disabled', label: 'No SSH login' },
  { value: 'sftp', label: 'SFTP only (inside the account’s files)' },
  { value: 'shell', label: 'A shell as the account’s user' },
];

/** An account's SSH access and keys, and its cron jobs (run now, or at their schedule). */
export function AccessSection({ accountId }: { accountId: string }) {
  const { berth } = useBerth();
  const queries = useQueryClient();
  const path = { params: { path: { account_id: accountId } } };
  const ssh = useQuery({
    queryKey: ['ssh', accountId],
    queryFn: async () => (await berth.GET('/v1/accounts/{account_id}/ssh', path)).data,
  });
  const keys = useQuery({
    queryKey: ['ssh-keys', accountId],
    queryFn: async () => (await berth.GET('/v1/accounts/{account_id}/ssh-keys', path)).data,
  });
  const jobs = useQuery({
    queryKey: ['cron-jobs', accountId],
    queryFn: async () => (await berth.GET('/v1/accounts/{account_id}/cron-jobs', path)).data,
  });
  const refresh = (what: string) => () => queries.invalidateQueries({ queryKey: [what, accountId] });
  const access = ssh.data;

  return (
    <section aria-labelledby="access-title">
      <h2 id="access-title">SSH and SFTP</h2>
      {access && (
        <p>
          {access.access === 'disabled'
            ? 'No SSH login.'
            : `Log in as ${access.username}${access.host ? ` at ${access.host}` : ''}, port ${access.port}.`}
        </p>
      )}
      <ApiForm
        label="SSH access"
        button="Set access"
        submit={async (v) => {
          await berth.PUT('/v1/accounts/{account_id}/ssh', {
            ...path,
            body: { access: (v.access ?? 'disabled') as 'disabled' | 'sftp' | 'shell' },
          });
          await refresh('ssh')();
        }}
      >
        {(errors) => (
          <Field
            key={access?.access}
            label="Access"
            name="access"
            defaultValue={access?.access}
            options={ACCESS}
            errors={errors}
          />
        )}
      </ApiForm>
      <ListTable
        caption="SSH keys"
        rows={keys.data?.data}
        columns={[
          ['Name', (k) => k.name],
          ['Type', (k) => k.type],
          ['Fingerprint', (k) => <code>{k.fingerprint_sha256}</code>],
          [
            'Actions',
            (k) => (
              <ActionButton
                label={`Delete key ${k.name}`}
                text="Delete"
                run={() =>
                  berth.DELETE('/v1/accounts/{account_id}/ssh-keys/{ssh_key_id}', {
                    params: { path: { account_id: accountId, ssh_key_id: k.id } },
                  })
                }
                done={refresh('ssh-keys')}
              />
            ),
          ],
        ]}
      />
      <ApiForm
        label="New SSH key"
        button="Add key"
        submit={async (v) => {
          await berth.POST('/v1/accounts/{account_id}/ssh-keys', {
            ...path,
            body: { name: v.name ?? '', public_key: v.public_key ?? '' },
          });
          await refresh('ssh-keys')();
        }}
      >
        {(errors) => (
          <>
            <Field label="Key name" name="name" errors={errors} />
            <Field label="Public key (ssh-ed25519 AAAA…)" name="public_key" errors={errors} />
          </>
        )}
      </ApiForm>

      <h2>Cron jobs</h2>
      <ListTable
        caption="Cron jobs"
        rows={jobs.data?.data}
        columns={[
          ['Name', (j) => j.name],
          ['Schedule', (j) => <code>{j.schedule}</code>],
          ['Next run', (j) => j.next_run_at ?? ''],
          [
            'Last run',
            (j) => (j.last_run ? `${j.last_run.status}${j.last_run.exit_code === null ? '' : ` (${j.last_run.exit_code})`}` : ''),
          ],
          [
            'Actions',
            (j) => {
              const job = { params: { path: { account_id: accountId, cron_job_id: j.id } } };
              return (
                <>
                  <ActionButton
                    label={`Run now: ${j.name}`}
                    text="Run now"
                    run={() => berth.POST('/v1/accounts/{account_id}/cron-jobs/{cron_job_id}/run', job)}
                    done={refresh('cron-jobs')}
                  />{' '}
                  <ActionButton
                    label={`Delete cron job ${j.name}`}
                    text="Delete"
                    run={() => berth.DELETE('/v1/accounts/{account_id}/cron-jobs/{cron_job_id}', job)}
                    done={refresh('cron-jobs')}
                  />
                </>
              );
            },
          ],
        ]}
      />
      <ApiForm
        label="New cron job"
        button="Add cron job"
        submit={async (v) => {
          await berth.POST('/v1/accounts/{account_id}/cron-jobs', {
            ...path,
            body: { name: v.name ?? '', schedule: v.schedule ?? '', command: { shell: v.command ?? '' } },
          });
          await refresh('cron-jobs')();
        }}
      >
        {(errors) => (
          <>
            <Field label="Job name" name="name" errors={errors} />
            <Field
              label="Schedule (cron: minute hour day month weekday)"
              name="schedule"
              defaultValue="*/15 * * * *"
              errors={errors}
            />
            <Field label="Command (run by /bin/sh as the account’s user)" name="command" errors={errors} />
          </>
        )}
      </ApiForm>
    </section>
  );
}
