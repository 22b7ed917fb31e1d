import { Webhook } from 'standardwebhooks';

/**
 * Checks a webhook delivery (Standard Webhooks: `webhook-id`, `webhook-timestamp`,
 * `webhook-signature`) against the endpoint's signing secret — or secrets, while one is being
 * rotated — and returns the event. Throws when no secret's signature matches or the timestamp is
 * more than five minutes away. `payload` is the raw body, exactly as received.
 */
export function verifyWebhook<E = Record<string, unknown>>(
  payload: string,
  headers: Headers | Record<string, string | string[] | undefined>,
  secrets: string | string[],
): E {
  const get = (name: string) => {
    const v = headers instanceof Headers ? headers.get(name) : headers[name];
    return Array.isArray(v) ? v[0] : (v ?? undefined);
  };
  const signed = {
    'webhook-id': get('webhook-id') ?? '',
    'webhook-timestamp': get('webhook-timestamp') ?? '',
    'webhook-signature': get('webhook-signature') ?? '',
  };
  let last: unknown;
  for (const secret of Array.isArray(secrets) ? secrets : [secrets]) {
    try {
      return new Webhook(secret).verify(payload, signed) as E;
    } catch (err) {
      last = err;
    }
  }
  throw last instanceof Error ? last : new Error('the webhook signature does not verify');
}
