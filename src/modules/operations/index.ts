/** The operations module's public surface: what other modules may use. */
export { type OperationRow, findOperationById, openOperation, startOperation, transition } from './repo.js';
export { type CancelHandler, toOperation } from './service.js';
