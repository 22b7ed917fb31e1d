/** The resellers module's public surface: what other modules may use. */
export { findReseller, lockResellerAccountCount } from './repo.js';
