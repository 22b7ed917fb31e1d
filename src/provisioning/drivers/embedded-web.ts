import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { acmeChallengeDir, webRenderDir } from '../../layout.js';
import { writeFileIfChanged } from '../atomic-write.js';
import type { WebDriver } from '../driver.js';
import { certificateFiles, renderServerBlock, SUSPENSION_PAGE, type SiteSpec, type WebServerOptions } from '../render/nginx.js';

export interface Listen {
  listen: string[];
  listenTls: string[];
}

/**
 * What a server block refers to, under `<dataDir>/rendered/web`: the suspension page, the
 * directory of HTTP-01 proofs, and the site's certificate and key (the key mode 0600, read by
 * nginx's master process only). Returns the options to render the block with.
 */
export async function writeSiteFiles(dataDir: string, site: SiteSpec, listen: Listen): Promise<WebServerOptions> {
  const root = webRenderDir(dataDir);
  const pagesDir = path.join(root, 'pages');
  const certDir = path.join(root, 'certs');
  const challengeDir = acmeChallengeDir(dataDir);
  await Promise.all([pagesDir, challengeDir].map((d) => mkdir(d, { recursive: true })));
  await mkdir(certDir, { recursive: true, mode: 0o700 });
  await writeFileIfChanged(path.join(pagesDir, 'suspended.html'), SUSPENSION_PAGE);
  const files = certificateFiles(certDir, path.basename(site.id));
  if (site.tls) {
    await writeFileIfChanged(files.key, site.tls.privateKeyPem, 0o600);
    await writeFileIfChanged(files.certificate, site.tls.fullchainPem);
  } else {
    await removeCertificateFiles(dataDir, site.id);
  }
  return { pagesDir, challengeDir, certDir, ...listen };
}

export async function removeCertificateFiles(dataDir: string, id: string): Promise<void> {
  const files = certificateFiles(path.join(webRenderDir(dataDir), 'certs'), path.basename(id));
  await Promise.all([rm(files.certificate, { force: true }), rm(files.key, { force: true })]);
}

/** `<dir>/<site>.conf`; ids are UUIDs, basename() keeps any surprise inside the directory. */
export const siteConfFile = (dir: string, id: string) => path.join(dir, `${path.basename(id)}.conf`);

/**
 * Renders each site's nginx server blocks to `<dataDir>/rendered/web/sites/<site>.conf` (a
 * directory nginx can `include`) with the files they refer to; serves nothing itself.
 */
export class EmbeddedWebDriver implements WebDriver {
  readonly name = 'embedded';
  private readonly dir: string;

  constructor(
    private readonly dataDir: string,
    private readonly listen: Listen = { listen: ['80', '[::]:80'], listenTls: ['443', '[::]:443'] },
  ) {
    this.dir = path.join(webRenderDir(dataDir), 'sites');
  }

  async applySite(site: SiteSpec): Promise<void> {
    const options = await writeSiteFiles(this.dataDir, site, this.listen);
    await mkdir(this.dir, { recursive: true });
    await writeFileIfChanged(siteConfFile(this.dir, site.id), renderServerBlock(site, options));
  }

  async removeSite(id: string): Promise<void> {
    await rm(siteConfFile(this.dir, id), { force: true });
    await removeCertificateFiles(this.dataDir, id);
  }
}
