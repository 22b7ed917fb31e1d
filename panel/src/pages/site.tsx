import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { problemText } from '../api.js';
import { useBerth } from '../app.js';
import { ActionButton, ApiForm, Field, ListTable, Problem, sizeText } from '../ui.js';

/**
 * The archive sent with XMLHttpRequest, whose upload reports its bytes as they go (fetch does
 * not); resolves with the API's answer, rejects with its problem.
 */
function upload(url: string, token: string, file: File, onBytes: (sent: number, total: number) => void) {
  return new Promise<{ operation: { id: string } }>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', url);
    xhr.setRequestHeader('authorization', `Bearer ${token}`);
    xhr.setRequestHeader('content-type', file.name.endsWith('.zip') ? 'application/zip' : 'application/gzip');
    xhr.upload.onprogress = (e) => onBytes(e.loaded, e.total);
    xhr.onload = () => {
      const body = JSON.parse(xhr.responseText || '{}') as { operation: { id: string }; title?: string; detail?: string };
      if (xhr.status === 202) resolve(body);
      else reject(new Error(`${body.title ?? xhr.status}: ${body.detail ?? ''}`));
    };
    xhr.onerror = () => reject(new Error('The upload failed (the connection was lost).'));
    xhr.send(file);
  });
}

/**
 * A site: its state, suspended or resumed; its runtime; its deployments, a kept release made live
 * again (rollback), and a new one uploaded with a progress bar in bytes.
 */
export function SitePage({ id }: { id: string }) {
  const { berth, session } = useBerth();
  const queries = useQueryClient();
  const path = { params: { path: { site_id: id } } };
  const site = useQuery({ queryKey: ['site', id], queryFn: async () => (await berth.GET('/v1/sites/{site_id}', path)).data });
  const deployments = useQuery({
    queryKey: ['deployments', id],
    queryFn: async () => (await berth.GET('/v1/sites/{site_id}/deployments', path)).data,
  });
  const runtimes = useQuery({ queryKey: ['runtimes'], queryFn: async () => (await berth.GET('/v1/runtimes')).data });
  const [sent, setSent] = useState<{ bytes: number; total: number } | null>(null);
  const [applying, setApplying] = useState<number | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  const refresh = async () => {
    await queries.invalidateQueries({ queryKey: ['deployments', id] });
    await queries.invalidateQueries({ queryKey: ['site', id] });
  };
  /** A kept release made live again (a rollback, or forward), followed until it is. */
  async function activate(deploymentId: string) {
    const accepted = await berth.POST('/v1/sites/{site_id}/deployments/{deployment_id}/activate', {
      params: { path: { site_id: id, deployment_id: deploymentId } },
    });
    if (accepted.data) await berth.operations.wait(accepted.data.operation.id, { timeoutMs: 300_000, intervalMs: 500 });
  }

  async function deploy(file: File) {
    setProblem(null);
    setApplying(null);
    try {
      const accepted = await upload(`/v1/sites/${encodeURIComponent(id)}/deployments`, session.token, file, (bytes, total) =>
        setSent({ bytes, total }),
      );
      // Then the deployment's operation, until it is live or has failed.
      const operation = await berth.operations.wait(accepted.operation.id, { timeoutMs: 300_000, intervalMs: 500 });
      setApplying(operation.progress ?? 100);
      if (operation.status !== 'succeeded') setProblem(operation.error?.detail ?? `The deployment ${operation.status}.`);
    } catch (err) {
      setProblem(problemText(err));
    } finally {
      await refresh();
    }
  }

  const s = site.data;
  if (site.error) return <Problem error={site.error} />;
  if (!s) return <p>Loading…</p>;
  return (
    <section aria-labelledby="site-title">
      <h1 id="site-title">{s.hostname}</h1>
      <dl className="facts">
        <dt>Status</dt>
        <dd>{s.status}</dd>
        <dt>Runtime</dt>
        <dd>{s.runtime}</dd>
        <dt>HTTPS</dt>
        <dd>{s.tls?.status ?? 'none'}</dd>
        <dt>Live deployment</dt>
        <dd>{s.current_deployment_id ?? 'none yet'}</dd>
      </dl>
      <div className="actions">
        {s.status === 'suspended' ? (
          <ActionButton
            label="Resume site"
            text="Resume site"
            run={() => berth.POST('/v1/sites/{site_id}/unsuspend', path)}
            done={refresh}
          />
        ) : (
          <ActionButton
            label="Suspend site"
            text="Suspend site"
            run={() => berth.POST('/v1/sites/{site_id}/suspend', { ...path, body: { reason: 'Suspended from the panel' } })}
            done={refresh}
          />
        )}
      </div>

      <h2>Runtime</h2>
      <ApiForm
        label="Runtime"
        button="Change runtime"
        submit={async (v) => {
          await berth.PATCH('/v1/sites/{site_id}', { ...path, body: { runtime: v.runtime ?? '' } });
          await refresh();
        }}
      >
        {(errors) => (
          <Field
            key={s.runtime}
            label="Runtime (static files or a PHP version)"
            name="runtime"
            defaultValue={s.runtime}
            options={(runtimes.data?.data ?? [{ name: s.runtime }]).map((r) => ({ value: r.name, label: r.name }))}
            errors={errors}
          />
        )}
      </ApiForm>

      <h2>Deploy</h2>
      <label htmlFor="archive">Archive (.tar.gz or .zip): its contents become the document root</label>
      <input
        id="archive"
        type="file"
        accept=".tar.gz,.tgz,.zip,application/gzip,application/zip"
        onChange={(e) => {
          const file = e.target.files?.[0];
          if (file) void deploy(file);
        }}
      />
      {sent && (
        <p>
          <label htmlFor="upload-progress">
            Uploaded {sizeText(sent.bytes)} of {sizeText(sent.total)}
          </label>{' '}
          <progress id="upload-progress" max={sent.total} value={sent.bytes} />
        </p>
      )}
      {applying !== null && !problem && <p role="status">Deployed: live.</p>}
      <Problem error={problem} />

      <ListTable
        caption="Deployments"
        rows={deployments.data?.data}
        columns={[
          ['Deployment', (d) => d.id],
          ['Status', (d) => d.status],
          ['Files', (d) => d.file_count ?? ''],
          ['Size', (d) => (d.size_bytes === null ? '' : sizeText(d.size_bytes))],
          [
            'Release',
            (d) =>
              d.status === 'superseded' && (
                <ActionButton
                  label={`Make live again: ${d.id}`}
                  text="Make live again"
                  run={() => activate(d.id)}
                  done={refresh}
                />
              ),
          ],
        ]}
      />
    </section>
  );
}
