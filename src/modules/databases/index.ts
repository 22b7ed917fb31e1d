/** The databases module's public surface: what other modules may use. */
export type { DatabaseBackups, DatabasesManifest } from './backup.js';
