import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { createRoute, described, itemDeleteRoute, itemRoute, listRoute, PATCH_DESCRIPTION } from '../../http/crud.js';
import { ifMatchVersion } from '../../http/etag.js';
import { PatchBody, type App } from '../../http/routes.js';
import { IdParams, IfMatchHeaders, PageOnlyQuery } from '../../http/schemas.js';
import { CreateCronJob, CronJobMutable, CronJobParams } from './schemas.js';
import type { CronService } from './service.js';

const COLLECTION = '/v1/accounts/:account_id/cron-jobs';
const ITEM = `${COLLECTION}/:cron_job_id`;

export function cronRoutes(app: App, svc: CronService): void {
  const tags = ['cron'];
  const ids = (req: FastifyRequest) => req.params as { account_id: string; cron_job_id: string };
  const accountReach = async (req: FastifyRequest) => svc.reachableAccount(callerOf(req), ids(req).account_id);
  const jobReach = async (req: FastifyRequest) => svc.load(callerOf(req), ids(req).account_id, ids(req).cron_job_id);

  listRoute(app, {
    path: COLLECTION,
    tags,
    operationId: 'listCronJobs',
    summary: "List an account's cron jobs",
    scope: 'cron:read',
    params: IdParams('acc'),
    reach: accountReach,
    querystring: PageOnlyQuery,
    item: 'CronJob',
    list: (caller, _q, page, req) => svc.list(caller, ids(req).account_id, page),
  });

  createRoute(app, {
    path: COLLECTION,
    tags,
    operationId: 'createCronJob',
    summary: 'Create a cron job',
    description:
      "Runs `command` on `schedule` as the account's Unix user in its home, on the account's web server, under `timeout_s` (default 3600) and, with `overlap: skip` (the default), never twice at once. A schedule firing more often than the plan's `cron_min_interval_minutes` is a 422 `schedule_too_frequent`; an unreadable one, `@reboot` or seconds a 422 `invalid_format`; a newline in `shell` a 422 `invalid_value` (NUL anywhere: `invalid_character`). `max_cron_jobs` applies (403). In the server's cron once `sync_state` is `in_sync`. Announced as `cron_job.created`.",
    scope: 'cron:write',
    params: IdParams('acc'),
    reach: accountReach,
    body: CreateCronJob,
    response: 'CronJob',
    create: (caller, body, req) => svc.create(caller, ids(req).account_id, body),
    location: (job) => `/v1/accounts/${job.account_id}/cron-jobs`,
  });

  itemRoute(app, {
    method: 'GET',
    path: ITEM,
    tags,
    operationId: 'getCronJob',
    summary: 'Get a cron job',
    description: 'The job with its `next_run_at` (null while disabled) and `last_run`, and its `ETag`.',
    scope: 'cron:read',
    reach: jobReach,
    params: CronJobParams,
    response: 'CronJob',
    run: (caller, p) => svc.get(caller, p.account_id, p.cron_job_id),
  });

  itemRoute(app, {
    method: 'PATCH',
    path: ITEM,
    tags,
    operationId: 'updateCronJob',
    summary: 'Update a cron job (JSON Merge Patch)',
    description: described(
      'The same checks as a creation. `command` is replaced whole. `enabled: false` takes its line out of the cron file (manual runs still work). Announced as `cron_job.updated`.',
      PATCH_DESCRIPTION,
    ),
    scope: 'cron:write',
    reach: jobReach,
    params: CronJobParams,
    headers: IfMatchHeaders,
    body: Type.Object(PatchBody(CronJobMutable).properties, { additionalProperties: false }),
    response: 'CronJob',
    run: (caller, p, body, req) => svc.update(caller, p.account_id, p.cron_job_id, body, ifMatchVersion(req)),
  });

  itemDeleteRoute(app, {
    path: ITEM,
    tags,
    operationId: 'deleteCronJob',
    summary: 'Delete a cron job',
    description: 'Its runs go with it; a run going on finishes. Announced as `cron_job.deleted`.',
    scope: 'cron:write',
    reach: jobReach,
    params: CronJobParams,
    remove: (caller, p, expectedVersion) => svc.remove(caller, p.account_id, p.cron_job_id, expectedVersion),
  });

  app.post(
    `${ITEM}/run`,
    {
      config: { scope: 'cron:write', reach: jobReach },
      schema: {
        tags,
        operationId: 'runCronJob',
        summary: 'Run a cron job now',
        description:
          "Starts a run of the job now, outside its schedule. 202 with the run, `running`; its end (`succeeded`, `failed`, `timed_out`, or `skipped` while the previous run holds the job's lock) shows in `GET .../runs` within seconds. Where no cron driver is configured (the embedded default) jobs never run: the run is `skipped` with the reason. A disabled job can be run this way.",
        params: CronJobParams,
        response: { 202: Type.Ref('CronRun') },
      },
    },
    async (req, reply) => {
      const p = ids(req);
      const run = await svc.run(callerOf(req), p.account_id, p.cron_job_id);
      return reply.code(202).header('location', `/v1/accounts/${p.account_id}/cron-jobs/${p.cron_job_id}/runs`).send(run);
    },
  );

  listRoute(app, {
    path: `${ITEM}/runs`,
    tags,
    operationId: 'listCronJobRuns',
    summary: "List a cron job's runs",
    description:
      "The job's newest runs first (the newest 100 are kept), each with its trigger, status, exit code and the last 64 KiB of its output. `next_cursor` (also in the `Link` header) leads to the next page.",
    scope: 'cron:read',
    params: CronJobParams,
    reach: jobReach,
    querystring: PageOnlyQuery,
    item: 'CronRun',
    list: (caller, _q, page, req) => svc.runs(caller, ids(req).account_id, ids(req).cron_job_id, page),
  });
}
