export { createBerth, ifMatch, type Berth, type BerthOptions, type ListItem, type ListPath, type Operation } from './client.js';
export { BerthError, OperationFailedError, type FieldError } from './errors.js';
export { retryAfterMs, type RetryOptions } from './retry.js';
export { verifyWebhook } from './webhooks.js';
export type { components, operations, paths } from './schema.js';
