import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { download, problemText } from '../api.js';
import { useBerth } from '../app.js';
import { ApiForm, ConfirmByName, Field, ListTable, Problem, sizeText } from '../ui.js';

/** An account's backups: made with a progress bar, downloaded with one in bytes, restored once confirmed; and its schedules. */
export function BackupsSection({ accountId, username }: { accountId: string; username: string }) {
  const { berth, session } = useBerth();
  const queries = useQueryClient();
  const backups = useQuery({
    queryKey: ['backups', accountId],
    queryFn: async () => (await berth.GET('/v1/backups', { params: { query: { account_id: accountId, limit: 100 } } })).data,
  });
  const schedules = useQuery({
    queryKey: ['backup-schedules', accountId],
    queryFn: async () =>
      (await berth.GET('/v1/backup-schedules', { params: { query: { account_id: accountId, limit: 100 } } })).data,
  });
  const [progress, setProgress] = useState<{ label: string; value: number; max: number; text: string } | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [restoring, setRestoring] = useState<string | null>(null);

  /** Runs one action with its bar, then shows what it did or its problem. */
  async function run(what: () => Promise<string>) {
    setProblem(null);
    setDone(null);
    try {
      setDone(await what());
    } catch (err) {
      setProblem(problemText(err));
    } finally {
      await queries.invalidateQueries({ queryKey: ['backups', accountId] });
    }
  }
  const follow = async (operationId: string, label: string) => {
    await berth.operations.wait(operationId, {
      intervalMs: 500,
      onProgress: (op) => setProgress({ label, value: op.progress, max: 100, text: `${op.progress} %` }),
    });
  };

  return (
    <section aria-labelledby="backups-title">
      <h2 id="backups-title">Backups</h2>
      <button
        type="button"
        onClick={() =>
          void run(async () => {
            const made = (await berth.POST('/v1/backups', { body: { account_id: accountId } })).data;
            if (made) await follow(made.operation.id, 'Backing up');
            return 'Backup completed.';
          })
        }
      >
        Make a backup
      </button>
      {progress && (
        <p>
          <label htmlFor="backup-progress">
            {progress.label}: {progress.text}
          </label>{' '}
          <progress id="backup-progress" max={progress.max} value={progress.value} />
        </p>
      )}
      {done && <p role="status">{done}</p>}
      <Problem error={problem} />
      <ListTable
        caption={`Backups of ${username}`}
        rows={backups.data?.data}
        columns={[
          ['Made', (b) => b.created_at],
          ['Status', (b) => b.status],
          ['Size', (b) => (b.size_bytes === null ? '' : sizeText(b.size_bytes))],
          [
            'Actions',
            (b) =>
              b.status === 'completed' && (
                <>
                  <button
                    type="button"
                    aria-label={`Download the backup ${b.id}`}
                    onClick={() =>
                      void run(async () => {
                        await download(
                          `/v1/backups/${encodeURIComponent(b.id)}/download`,
                          session.token,
                          { name: `${username}-${b.id}.tar.gz`, type: 'application/gzip' },
                          (got, total) =>
                            setProgress({
                              label: 'Downloaded',
                              value: got,
                              max: total,
                              text: `${sizeText(got)} of ${sizeText(total)}`,
                            }),
                        );
                        return 'Downloaded.';
                      })
                    }
                  >
                    Download
                  </button>{' '}
                  <button type="button" aria-label={`Restore the backup ${b.id}`} onClick={() => setRestoring(b.id)}>
                    Restore
                  </button>
                </>
              ),
          ],
        ]}
      />
      {restoring && (
        <ConfirmByName
          name={username}
          action="Restore backup"
          run={() =>
            run(async () => {
              const restore = (
                await berth.POST('/v1/backups/{backup_id}/restore', { params: { path: { backup_id: restoring } }, body: {} })
              ).data;
              if (restore) await follow(restore.operation.id, 'Restoring');
              setRestoring(null);
              return 'Restored.';
            })
          }
        />
      )}

      <h3>Schedules</h3>
      <ul>
        {schedules.data?.data.map((s) => (
          <li key={s.id}>
            <code>{s.cron}</code> ({s.timezone}), keeps {s.retain}; next {s.next_run_at ?? 'never (disabled)'}
          </li>
        ))}
      </ul>
      <ApiForm
        label="New backup schedule"
        button="Add schedule"
        submit={async (v) => {
          await berth.POST('/v1/backup-schedules', {
            body: { account_id: accountId, cron: v.cron ?? '', timezone: v.timezone || undefined, retain: Number(v.retain) },
          });
          await queries.invalidateQueries({ queryKey: ['backup-schedules', accountId] });
        }}
      >
        {(errors) => (
          <>
            <Field label="When (cron: minute hour day month weekday)" name="cron" defaultValue="30 2 * * *" errors={errors} />
            <Field label="Time zone" name="timezone" defaultValue="UTC" errors={errors} />
            <Field label="Backups kept" name="retain" type="number" defaultValue="7" errors={errors} />
          </>
        )}
      </ApiForm>
    </section>
  );
}
