/** The domains module's public surface: what other modules may use of domains and their zones. */
export { domainNamesOfAccount, domainNameTaken } from './repo.js';
export { listRecords } from './records/repo.js';
export type { DomainDependent, DomainHooks } from './hooks.js';
export { type RecordsService } from './records/service.js';
export { type DomainRow, findDomain, findDomainById, listDomains } from './repo.js';
export { toDomain, toRecord } from './representation.js';
export { type DomainsService } from './service.js';
export type { AcmeChallengeRecords } from './zone/acme-challenges.js';
export { dkimSealKey, signingKey } from './mail-auth/repo.js';
