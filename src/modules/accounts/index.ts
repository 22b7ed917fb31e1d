/** The accounts module's public surface: what other modules may use. */
export { type AccountMoves, notMoving, notMovingNow } from './moving.js';
export { choosePlacement } from './placement.js';
export { accountsPlacedOn, type AccountRow, countAccountsOn, findAccountById } from './repo.js';
export type { Placement } from './schemas.js';
export {
  type AccountHooks,
  hasFeature,
  limitsOf,
  lockBelowLimit,
  reachableAccount,
  toAccount,
  transferLimit,
  writableAccount,
} from './service.js';
export { counterOf, type ResourceCounter } from './usage.js';
