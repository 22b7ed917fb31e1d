/** The plans module's public surface: what other modules may use. */
export { findPlan } from './repo.js';
export type { PlanHooks } from './service.js';
export { LIMIT_FIELDS, LimitSchemas, type LimitField, type Limits, SshAccess } from './schemas.js';
