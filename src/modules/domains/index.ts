/** The domains module's public surface: what other modules may use of domains and their zones. */
export { domainNamesOfAccount, domainNameTaken, zonesOfAccount, type DomainRow, findDomain, findDomainById } from './repo.js';
export type { DomainDependent, DomainHooks } from './hooks.js';
export type { AcmeChallengeRecords } from './zone/acme-challenges.js';
export { dkimSealKey, signingKey, signingKeys } from './mail-auth/repo.js';
export { type RoleRecords, serverAddresses, type ServerRecords } from './zone/server-records.js';
