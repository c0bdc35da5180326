// Registering a Mode A definition the way `gds push` does (POST /api/artifacts), for tests that need a
// fresh table over one of the dev connector's warehouse objects (analytics_dev.<object>), or a table pushed
// by hand (no project) that a dbt project's plan meets.
import type { ApiClient } from '../../src/client/index.js';
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

/** Table `table` over `source` (one integer column `id`), pushed by hand on `connectorId` as `filename`. */
export function pushByHand(
  client: Pick<ApiClient, 'artifacts'>,
  push: { filename: string; table: string; source: string; connectorId: string | undefined },
) {
  return client.artifacts.push({
    filename: push.filename,
    content: JSON.stringify({
      table: push.table,
      source: push.source,
      columns: [{ name: 'id', type: 'integer' }],
    }),
    connectorId: push.connectorId,
  });
}
