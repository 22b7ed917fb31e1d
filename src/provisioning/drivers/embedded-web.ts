import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { writeFileIfChanged } from '../atomic-write.js';
import type { WebDriver } from '../driver.js';
import { renderServerBlock, SUSPENSION_PAGE, type SiteSpec } from '../render/nginx.js';

/** The suspension page every suspended site serves, written once under `<dataDir>/rendered/web/pages`. */
export async function writeSuspensionPage(dataDir: string): Promise<string> {
  const pagesDir = path.resolve(dataDir, 'rendered', 'web', 'pages');
  await mkdir(pagesDir, { recursive: true });
  await writeFileIfChanged(path.join(pagesDir, 'suspended.html'), SUSPENSION_PAGE);
  return pagesDir;
}

/** `<dir>/<site>.conf`; ids are UUIDs, basename() keeps any surprise inside the directory. */
export const siteConfFile = (dir: string, id: string) => path.join(dir, `${path.basename(id)}.conf`);

/**
 * Renders each site's nginx server block to `<dataDir>/rendered/web/sites/<site>.conf` (a
 * directory nginx can `include`) and the shared suspension page; serves nothing itself.
 */
export class EmbeddedWebDriver implements WebDriver {
  readonly name = 'embedded';
  private readonly dir: string;

  constructor(
    private readonly dataDir: string,
    private readonly listen: string[] = ['80', '[::]:80'],
  ) {
    this.dir = path.resolve(dataDir, 'rendered', 'web', 'sites');
  }

  async applySite(site: SiteSpec): Promise<void> {
    const pagesDir = await writeSuspensionPage(this.dataDir);
    await mkdir(this.dir, { recursive: true });
    await writeFileIfChanged(siteConfFile(this.dir, site.id), renderServerBlock(site, { pagesDir, listen: this.listen }));
  }

  async removeSite(id: string): Promise<void> {
    await rm(siteConfFile(this.dir, id), { force: true });
  }
}
