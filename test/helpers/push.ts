// Registering a Mode A definition the way `gds push` does (POST /api/artifacts), for tests that need a
// fresh table over one of the dev connector's warehouse objects (analytics_dev.<object>).
import type { ReadyUser, TestResponse, TestServer } from './server.js';

/** A YAML definition of `analytics_dev.<object>` with `columns`, pushed with `role`'s CLI token. */
export function pushDevDefinition(
  server: TestServer,
  object: string,
  columns: string[],
  role: ReadyUser['role'] = 'ADMIN',
): Promise<TestResponse> {
  const content = [
    `table: ${object}`,
    `source: analytics_dev.${object}`,
    'columns:',
    ...columns.map((c) => `  - ${c}`),
  ].join('\n');
  return server.request('POST', '/api/artifacts', {
    token: server.user(role).cliToken,
    body: { filename: `${object}.yml`, content },
  });
}
