import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { writeFileIfChanged } from '../atomic-write.js';
import type { WebDriver } from '../driver.js';
import { renderServerBlock, SUSPENSION_PAGE, type SiteSpec } from '../render/nginx.js';

/**
 * Renders each site's nginx server block to `<dataDir>/rendered/web/sites/<site>.conf` (a
 * directory nginx can `include`) and the shared suspension page; serves nothing itself.
 */
export class EmbeddedWebDriver implements WebDriver {
  readonly name = 'embedded';
  private readonly dir: string;

  constructor(dataDir: string) {
    this.dir = path.resolve(dataDir, 'rendered', 'web');
  }

  async applySite(site: SiteSpec): Promise<void> {
    const pagesDir = path.join(this.dir, 'pages');
    await mkdir(pagesDir, { recursive: true });
    await writeFileIfChanged(path.join(pagesDir, 'suspended.html'), SUSPENSION_PAGE);
    await mkdir(path.join(this.dir, 'sites'), { recursive: true });
    await writeFileIfChanged(this.siteFile(site.id), renderServerBlock(site, { pagesDir, listen: 80 }));
  }

  async removeSite(id: string): Promise<void> {
    await rm(this.siteFile(id), { force: true });
  }

  private siteFile(id: string): string {
    return path.join(this.dir, 'sites', `${path.basename(id)}.conf`);
  }
}
