/** The servers module's public surface: where accounts may be placed, and which server is this one. */
export { addressesOf, type ServerAddresses } from './addresses.js';
export { findServerById, LOCAL_SERVER_ID, placementCandidates, type ServerRow } from './repo.js';
export { measuredInto } from './measured.js';
export { noRoomOn } from './room.js';
export { ROLES, type Role } from './schemas.js';
export { serverStatus, serverTimeZone } from './status.js';
export { AgentTaskFailed, relayedTask, runAgentTask } from './tasks.js';
export { copyFromServer, type RelayTo } from './copies.js';
export { discardCopy, type ReceiveTask, sentAheadTo, sendCopy } from './send-copy.js';
export { handedToAgent, wakeAgent } from './wake.js';
export { withdrawAccount } from './withdrawals.js';
export { forwardAccount, type ForwardTargets } from './forwards.js';
export { type AccountUnitRow, accountUnits, SERVED_STATUS } from './account-units.js';
export type { ServerHooks } from './service.js';
