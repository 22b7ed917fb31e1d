/** The accounts module's public surface: what other modules may use. */
export { type AccountRow, findAccountById } from './repo.js';
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
