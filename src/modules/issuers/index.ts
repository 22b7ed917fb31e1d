/** The issuers' public surface: how a stored certificate is kept and shown. */
export type { StoredCertificate } from './repo.js';
export { toCertificate } from './representation.js';
