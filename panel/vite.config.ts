import path from 'node:path';
import { defineConfig } from 'vite';

/**
 * The panel and the API reference: static files under dist/panel, served by the API at /panel/
 * and /docs (src/http/panel.ts).
 * No plugin: Vite compiles the TSX itself (React's automatic runtime).
 */
export default defineConfig({
  root: import.meta.dirname,
  base: '/panel/',
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: path.resolve(import.meta.dirname, '..', 'dist', 'panel'),
    emptyOutDir: true,
    // Nothing inline: the CSP allows scripts and styles from the server only.
    assetsInlineLimit: 0,
    // The size of each file, and gzipped, is printed: the bundle stays under 300 KB gzipped.
    reportCompressedSize: true,
    rolldownOptions: {
      // Two pages sharing React: the panel, and the API reference served at /docs.
      input: {
        panel: path.resolve(import.meta.dirname, 'index.html'),
        docs: path.resolve(import.meta.dirname, 'docs.html'),
      },
      // React Query marks its modules "use client" for server rendering, which the panel has none of.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
});
