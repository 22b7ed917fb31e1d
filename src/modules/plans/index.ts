/** The plans module's public surface: what other modules may use. */
export { LIMIT_FIELDS, type LimitField, type Limits, findPlan } from './repo.js';
export { LimitSchemas } from './routes.js';
