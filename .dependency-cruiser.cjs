/**
 * Import rules of the house (ARCHITECTURE.md): modules meet only through each other's public
 * surface (index.ts), provisioning and the HTTP plugins know nothing of the modules, the shared
 * layers below know nothing of the features, and nothing goes round in a circle. Part of
 * `npm run lint`: a new violation fails CI.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle ties every unit on it together: none may change or be tested alone.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'provisioning-knows-no-module',
      severity: 'error',
      comment: 'Drivers and renderers receive plain specs; the unit loaders live with the data.',
      from: { path: '^src/provisioning/' },
      to: { path: '^src/modules/' },
    },
    {
      name: 'only-public-surfaces',
      severity: 'error',
      comment: 'Another module is reached through its index.ts, never its repo, unit or routes.',
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '^src/modules/([^/]+)/.+', pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/index\\.ts$'] },
    },
    {
      name: 'agent-imports-drivers-and-specs-only',
      severity: 'error',
      comment:
        'The agent (a second entry point, on the hosting servers) applies specs with the drivers: no module, database, HTTP plugin or job code, so it can hold no credential of the control plane.',
      from: { path: '^src/agent/' },
      to: { path: '^src/(modules|db|http|jobs|app\\.ts|server\\.ts)' },
    },
    {
      name: 'tls-knows-no-module',
      comment:
        'Keys, the internal CA, ACME, HTTP-01 proofs and certificate checks are plain functions over PEM: the issuers and sites modules call them.',
      severity: 'error',
      from: { path: '^src/tls/' },
      to: { path: '^src/(modules|http|jobs|provisioning)/' },
    },
    {
      name: 'http-knows-no-module',
      severity: 'error',
      comment: 'The shared HTTP plugins serve every module and import none: a module hands them what they need.',
      from: { path: '^src/http/' },
      to: { path: '^src/modules/' },
    },
    {
      name: 'shared-layers-know-no-feature',
      severity: 'error',
      comment: 'lib, db and auth sit below everything: they import no module, route or job.',
      from: { path: '^src/(lib|db|auth)/' },
      to: { path: '^src/(modules|http|jobs|provisioning|app\\.ts)' },
    },
    {
      name: 'cli-client-uses-the-sdk-only',
      severity: 'error',
      comment: 'The berth client talks to a server over HTTP, through @berth/sdk: it loads none of the server.',
      from: { path: '^src/cli/client/' },
      to: { path: '^src/', pathNot: '^src/cli/client/' },
    },
    {
      name: 'cli-entry-loads-no-server-code',
      severity: 'error',
      comment:
        'main.ts starts every berth command: server code it imports (config.ts brings TypeBox and argon2, 700 modules) costs each client command a second. It reaches the server only through server-commands.ts, imported when one of those commands runs, and the cron runner (started by cron for each run) through its own small command.',
      from: { path: '^src/cli/main\\.ts$' },
      to: { path: '^src/', pathNot: '^src/(cli/(client/|server-commands\\.ts$)|provisioning/cron/command\\.ts$)' },
    },
    {
      name: 'cli-entry-imports-server-commands-on-demand',
      severity: 'error',
      from: { path: '^src/cli/main\\.ts$' },
      to: { path: '^src/(cli/server-commands|provisioning/cron/command)\\.ts$', dependencyTypesNot: ['dynamic-import'] },
    },
    {
      name: 'source-knows-no-test',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
