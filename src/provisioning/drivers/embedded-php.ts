import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { writeFileIfChanged } from '../atomic-write.js';
import type { PhpDriver } from '../driver.js';
import { renderPool, unixUser, type PhpPoolSpec } from '../render/php-fpm.js';

/** `<dir>/berth-<username>.conf`: one pool file per account in each version's pool directory. */
export const poolFile = (dir: string, username: string) => path.join(dir, `${unixUser(username)}.conf`);

/**
 * Renders each account's pools into `<dataDir>/rendered/php/<version>/` (a directory PHP-FPM can
 * `include`) and runs nothing: no Unix user is made and files keep their owner. The versions are
 * the configured or installed ones, so sites can choose them where PHP runs elsewhere.
 */
export class EmbeddedPhpDriver implements PhpDriver {
  readonly name = 'embedded';
  private readonly dir: string;

  constructor(
    dataDir: string,
    readonly versions: readonly string[],
    private readonly o: { socketDir: string; webGroup: string },
  ) {
    this.dir = path.resolve(dataDir, 'rendered', 'php');
  }

  socket(username: string, version: string): string {
    return path.join(this.o.socketDir, `${unixUser(username)}-${version}.sock`);
  }

  /** No user is made here: the name it would have. */
  async ensureUser(username: string): Promise<string> {
    return unixUser(username);
  }

  async ensurePools(pools: PhpPoolSpec[]): Promise<void> {
    for (const p of pools) {
      const dir = path.join(this.dir, p.version);
      await mkdir(dir, { recursive: true });
      const user = unixUser(p.username);
      await writeFileIfChanged(
        poolFile(dir, p.username),
        renderPool(p, { user, socket: this.socket(p.username, p.version), webGroup: this.o.webGroup }),
      );
    }
  }

  async prunePools(username: string, keep: readonly string[]): Promise<void> {
    for (const v of this.versions) if (!keep.includes(v)) await rm(poolFile(path.join(this.dir, v), username), { force: true });
  }

  removeAccount(username: string): Promise<void> {
    return this.prunePools(username, []);
  }

  async own(): Promise<void> {}

  /** It runs no PHP. */
  async endRequests(): Promise<void> {}
}
