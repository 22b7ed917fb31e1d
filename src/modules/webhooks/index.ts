/** The webhooks module's public surface. */
export { enqueueEventDeliveries } from './outbox.js';
