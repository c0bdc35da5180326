/* global module */
/** Layering of docs/architecture.md, and no import cycle. `npm run lint:layers` tolerates no violation. */
const forbid = (name, from, to) => ({ name, severity: 'error', from: { path: from }, to: { path: to } });
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    forbid('server-is-standalone', '^src/server/', '^src/(cli|commands|services|auth|client|io)/'),
    forbid(
      'nothing-below-cli-imports-it',
      '^src/(services|auth|client|io|contract|core|server)/',
      '^src/(cli|commands)/',
    ),
    forbid('cli-does-not-import-commands', '^src/cli/', '^src/commands/'),
    forbid('services-do-not-import-up', '^src/(auth|client|io|contract|core)/', '^src/services/'),
    forbid('io-uses-only-core', '^src/io/', '^src/(auth|client|contract|server)/'),
    forbid(
      'nothing-imports-the-server',
      '^src/(commands|cli|services|auth|client|io|contract|core)/',
      '^src/server/',
    ),
    forbid('client-below-auth', '^src/(client|contract|core)/', '^src/auth/'),
    forbid('contract-and-core-at-the-bottom', '^src/(contract|core)/', '^src/(client|io)/'),
    forbid('core-below-contract', '^src/core/', '^src/contract/'),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
