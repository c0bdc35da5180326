// The set-up of the tests of `gds plan` and `gds apply` (test/commands/project-*): a test server on one engine,
// the client planProject and applyPlan are given (ADMIN's CLI token, no waiting between retries), the dev
// connector, and the warehouse relations the test's models are built as, in analytics_dev.
//
//   let project: ProjectServer;
//   beforeAll(async () => {
//     project = await startProjectServer({ postgres, relations: { orders: 'id integer, label text' } });
//   });
//   afterAll(() => project?.close());
import { createApiClient, staticToken } from '../../src/client/index.js';
import type { ApiClient } from '../../src/client/index.js';
import type { TestServer, TestServerOptions } from './server.js';
import { startTestServer } from './server.js';

export interface ProjectServer {
  server: TestServer;
  client: ApiClient;
  /** The id of the seeded dev connector (its schema is analytics_dev). */
  dev: string;
  /** Closes the client, then the server. */
  close(): Promise<void>;
}

export interface ProjectServerOptions extends Pick<TestServerOptions, 'rateLimit'> {
  /** On a fresh database of the test PostgreSQL instead of PGlite. */
  postgres?: boolean;
  /** Tables made in analytics_dev: name → column definitions (`id integer, label text`). */
  relations?: Record<string, string>;
  /** Where the client's log lines go; dropped when absent. */
  logger?: (line: string) => void;
}

export async function startProjectServer(options: ProjectServerOptions = {}): Promise<ProjectServer> {
  const server = await startTestServer({
    ...(options.rateLimit ? { rateLimit: options.rateLimit } : {}),
    ...(options.postgres ? { database: 'postgres' as const } : {}),
  });
  const client = createApiClient({
    baseUrl: server.url,
    auth: staticToken(server.user('ADMIN').cliToken),
    sleep: async () => {},
    logger: options.logger ?? (() => {}),
  });
  const dev = server.ready.connectors.find((c) => c.environmentLabel === 'dev')?.id ?? '';
  for (const [name, columns] of Object.entries(options.relations ?? {}))
    await server.sql(`CREATE TABLE analytics_dev.${name} (${columns})`);
  return {
    server,
    client,
    dev,
    async close() {
      await client.close();
      await server.close();
    },
  };
}
