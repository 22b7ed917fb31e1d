/** The events module's public surface: recording an event, its representation, the types. */
export { recordEvent, type NewEvent } from './repo.js';
export { toEvent } from './representation.js';
export { EVENT_TYPES, TEST_EVENT_TYPE } from './types.js';
export { EVENT_RETENTION_MS } from './module.js';
