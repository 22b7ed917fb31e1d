import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
export const generateSigningSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * The Standard Webhooks headers. Every secret signs (space-separated `v1,` signatures), so a
 * consumer still holding the previous secret verifies during a rotation.
 */
export function signedHeaders(secrets: string[], messageId: string, timestamp: Date, body: string): Record<string, string> {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': secrets.map((s) => new Webhook(s).sign(messageId, timestamp, body)).join(' '),
  };
}
