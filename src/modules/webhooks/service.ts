import { requireWritable, type Caller } from '../../auth/caller.js';
import type { PageParams } from '../../db/paging.js';
import { conflict, invalid, notFound, type FieldError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { checkVersion, staleVersion } from '../../lib/if-match.js';
import { seal } from '../../lib/sealed.js';
import type { ServiceDeps } from '../deps.js';
import { TEST_EVENT_TYPE, toEvent } from '../events/index.js';
import { resourceReads } from '../reads.js';
import type { AddressPolicy } from './address-policy.js';
import * as deliveries from './deliveries-repo.js';
import * as repo from './repo.js';
import { toDelivery, toWebhook } from './representation.js';
import type { CreateWebhook, Delivery, DeliveryListQuery, Webhook, WebhookPatch } from './schemas.js';
import { generateSigningSecret } from './signing.js';

/** After a rotation the previous secret keeps signing this long. */
const ROTATION_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface WebhookDeps {
  secretsKey: Buffer;
  policy: AddressPolicy;
  /** Asks the relay to look for due deliveries now (a test or a retry need not wait). */
  kick: () => void;
}

type WithSecret = Webhook & { secret: string };

export function webhooksService({ db, clock }: ServiceDeps, { secretsKey, policy, kick }: WebhookDeps) {
  const reads = resourceReads(db, { noun: 'webhook', find: repo.findWebhook, list: repo.listWebhooks, show: toWebhook });
  const { load } = reads;

  async function check(input: WebhookPatch): Promise<void> {
    const errors: FieldError[] = [];
    if (input.url !== undefined) {
      const problems = policy.urlProblems(input.url);
      if (!problems.length) {
        const problem = await policy.resolutionProblem(input.url);
        if (problem) problems.push(problem);
      }
      for (const detail of problems) errors.push({ pointer: '/url', code: 'forbidden_url', detail });
    }
    if (input.event_types && input.event_types.includes('*') && input.event_types.length > 1)
      errors.push({ pointer: '/event_types', code: 'invalid_value', detail: '"*" subscribes to every type and stands alone' });
    if (errors.length) throw invalid(errors);
  }

  async function loadDelivery(caller: Caller, webhookId: string, id: string) {
    const webhook = await load(caller, webhookId);
    const delivery = await deliveries.findDelivery(db, webhookId, id);
    if (!delivery) throw notFound('delivery');
    return { webhook, delivery };
  }

  const present = async (d: deliveries.DeliveryRow): Promise<Delivery> => toDelivery(d, await deliveries.attemptsOf(db, [d.id]));

  return {
    ...reads,

    /** The endpoint belongs to the calling principal and sees what it sees (narrowed like its token). */
    async create(caller: Caller, input: CreateWebhook): Promise<WithSecret> {
      requireWritable(caller);
      await check(input);
      const { kind, id } = caller.principal;
      const secret = generateSigningSecret();
      const row = await repo.insertWebhook(db, {
        id: newId('whk'),
        principal_kind: kind,
        reseller_id: kind === 'reseller' ? id : kind === 'account' ? caller.resellerId : null,
        account_id: kind === 'account' ? id : null,
        account_ids: kind === 'account' ? null : caller.accountIds,
        url: input.url,
        description: input.description ?? '',
        event_types: [...new Set(input.event_types)],
        enabled: input.enabled ?? true,
        secret_sealed: seal(secret, secretsKey),
        created_by: caller.tokenId,
      });
      return { ...toWebhook(row), secret };
    },

    async update(caller: Caller, id: string, patch: WebhookPatch, expectedVersion?: number): Promise<Webhook> {
      const current = await load(caller, id);
      requireWritable(caller);
      checkVersion(expectedVersion, current.version);
      await check(patch);
      const change: repo.WebhookChange = {};
      if (patch.url !== undefined) change.url = patch.url;
      if (patch.description !== undefined) change.description = patch.description;
      if (patch.event_types !== undefined) change.event_types = [...new Set(patch.event_types)];
      if (patch.enabled !== undefined) {
        change.enabled = patch.enabled;
        if (patch.enabled) change.disabled_reason = null;
      }
      const row = await repo.updateWebhook(db, id, current.version, change);
      if (!row) throw staleVersion();
      if (patch.enabled) kick();
      return toWebhook(row);
    },

    async remove(caller: Caller, id: string, expectedVersion?: number): Promise<void> {
      const current = await load(caller, id);
      requireWritable(caller);
      checkVersion(expectedVersion, current.version);
      if (!(await repo.deleteWebhook(db, id, current.version))) throw staleVersion();
    },

    /** A new secret; the previous one keeps signing for ROTATION_WINDOW_MS (only the last two sign). */
    async rotateSecret(caller: Caller, id: string): Promise<WithSecret> {
      const current = await load(caller, id);
      requireWritable(caller);
      const secret = generateSigningSecret();
      const row = await repo.updateWebhook(db, id, current.version, {
        secret_sealed: seal(secret, secretsKey),
        previous_secret_sealed: current.secret_sealed,
        previous_secret_expires_at: new Date(clock.now().getTime() + ROTATION_WINDOW_MS),
      });
      if (!row) throw staleVersion();
      return { ...toWebhook(row), secret };
    },

    /** Sends `webhook.test` to this endpoint only; it is not an event of the feed. */
    async test(caller: Caller, id: string): Promise<Delivery> {
      const w = await load(caller, id);
      requireWritable(caller);
      if (!w.enabled) throw conflict('invalid_state', 'The endpoint is disabled; enable it first.');
      const eventId = newId('evt');
      const payload = toEvent({
        id: eventId,
        type: TEST_EVENT_TYPE,
        created_at: clock.now().toISOString(),
        account_id: w.account_id,
        resource_type: 'webhook',
        resource_id: w.id,
        resource_version: w.version,
        data: toWebhook(w),
      });
      const deliveryId = newId('whd');
      await deliveries.insertDeliveries(db, [
        { id: deliveryId, webhook_id: w.id, event_id: eventId, event_type: TEST_EVENT_TYPE, payload: JSON.stringify(payload) },
      ]);
      kick();
      return present((await deliveries.findDelivery(db, w.id, deliveryId)) as deliveries.DeliveryRow);
    },

    async listDeliveries(caller: Caller, webhookId: string, filter: DeliveryListQuery, page: PageParams): Promise<Delivery[]> {
      await load(caller, webhookId);
      const rows = await deliveries.listDeliveries(db, webhookId, filter, page);
      const attempts = await deliveries.attemptsOf(
        db,
        rows.map((r) => r.id),
      );
      return rows.map((r) =>
        toDelivery(
          r,
          attempts.filter((a) => a.delivery_id === r.id),
        ),
      );
    },

    getDelivery: async (caller: Caller, webhookId: string, id: string): Promise<Delivery> =>
      present((await loadDelivery(caller, webhookId, id)).delivery),

    /**
     * Sends a delivery again now: a finished one once more (its failure schedules nothing and
     * disables nothing), a waiting one ahead of its schedule.
     */
    async retryDelivery(caller: Caller, webhookId: string, id: string): Promise<Delivery> {
      const { webhook: w, delivery: d } = await loadDelivery(caller, webhookId, id);
      requireWritable(caller);
      if (!w.enabled) throw conflict('invalid_state', 'The endpoint is disabled; enable it first.');
      const row = await deliveries.requeueDelivery(db, d);
      if (!row) throw conflict('invalid_state', 'The delivery is being sent right now.');
      kick();
      return present(row);
    },
  };
}
export type WebhooksService = ReturnType<typeof webhooksService>;
