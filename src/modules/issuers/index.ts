// The issuers' public surface: how a stored certificate is shown.
export { toCertificate } from './representation.js';
