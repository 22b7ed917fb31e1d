import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { writeFileIfChanged } from '../atomic-write.js';
import type { DatabaseDriver } from '../driver.js';
import {
  definitionsDigest,
  renderDatabaseState,
  type DatabaseAccountSpec,
  type DatabaseSpec,
  type TableChecksums,
} from '../render/mariadb.js';

/**
 * Renders each account's statements into `<dataDir>/rendered/db/<prefix>.sql` (mode 0600: they
 * hold password hashes) and applies nothing: there is no server, so every size is 0 and a dump
 * holds no rows.
 */
export class EmbeddedDatabaseDriver implements DatabaseDriver {
  readonly name = 'embedded';
  private readonly dir: string;

  constructor(
    dataDir: string,
    private readonly userHost: string,
  ) {
    this.dir = path.resolve(dataDir, 'rendered', 'db');
  }

  private file = (prefix: string) => path.join(this.dir, `${prefix.replace(/_$/, '')}.sql`);

  async applyAccount(spec: DatabaseAccountSpec): Promise<Map<string, number>> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeFileIfChanged(this.file(spec.prefix), renderDatabaseState(spec, this.userHost), 0o600);
    return new Map(spec.databases.map((d) => [d.name, 0]));
  }

  async removeAccount(prefix: string): Promise<void> {
    await rm(this.file(prefix), { force: true });
  }

  async measure(): Promise<Map<string, number>> {
    return new Map();
  }

  async dump(database: string, out: Writable): Promise<void> {
    await finished(out.end(`-- ${database}: the embedded driver has no database server, so no rows\n`), { readable: false });
  }

  /** Nothing to load into; the dump is read through, so that its sender finishes. */
  async load(_database: DatabaseSpec, dump: Readable): Promise<void> {
    await finished(dump.resume());
  }

  /** No tables, views, routines or events, anywhere. */
  async checksums(): Promise<TableChecksums> {
    return { version: this.name, tables: {}, definitions: {}, views: [], objects: definitionsDigest([]) };
  }
}
