// A table name is one per workspace, whatever the environment: `gds plan` refuses a model whose name a table
// of another environment holds, finding that table by name (GET /api/tables?name=a&name=b, in groups the URL
// allows) instead of reading the whole workspace's list, and a plan creating nothing asks nothing of it. A
// service from before `name` could be repeated refuses it: the plan then reads the list as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staticToken } from '../../src/client/index.js';
import { ApiError } from '../../src/client/errors.js';
import { tablesApi } from '../../src/client/areas/tables.js';
import type { Transport } from '../../src/client/transport.js';
import { createTransport } from '../../src/client/transport.js';
import { CliError } from '../../src/core/errors.js';
import { applyPlan } from '../../src/services/project-apply.js';
import { planProject } from '../../src/services/project-plan.js';
import { dbtProjectOf } from '../helpers/dbt-declaration.js';
import { ENGINES } from '../helpers/engines.js';
import type { ProjectServer } from '../helpers/project-server.js';
import { startProjectServer } from '../helpers/project-server.js';
import { pushByHand } from '../helpers/push.js';
import { needs } from '../helpers/skip.js';

const describeError = (error: unknown) =>
  error instanceof CliError ? error : new CliError(String(error), { exitCode: 1 });

/** The table-list requests among the client's debug lines (`→ GET …/api/tables?…`), held-tables aside. */
const tableListRequests = (log: string[]) =>
  log.filter((line) => /^→ GET \S+\/api\/tables(\?|$| )/.test(line));

describe.each(ENGINES)('names held in other environments on $engine', ({ postgres, skip }) => {
  let started: ProjectServer | undefined;
  const log: string[] = [];
  let takenId = '';

  beforeAll(async () => {
    if (skip !== undefined) return;
    started = await startProjectServer({
      postgres,
      logger: (line) => log.push(line),
      relations: Object.fromEntries(
        ['nm_orders', 'nm_taken', 'nm_new'].map((n) => [n, 'id integer, label text']),
      ),
    });
    const { server, client } = started;
    await server.sql('CREATE TABLE analytics_prod.nm_taken (id integer, label text)');
    const production = server.ready.connectors.find((c) => c.environmentLabel === 'production')?.id;
    const pushed = await pushByHand(client, {
      filename: 'nm_taken.json',
      table: 'NM_Taken',
      source: 'analytics_prod.nm_taken',
      connectorId: production,
    });
    takenId = pushed.tableId ?? '';
  });

  afterAll(() => started?.close());

  const heldElsewhere = (id: string) =>
    `the name nm_taken is held by table ${id} (analytics_prod.nm_taken, production, no project), and a table name is one per workspace: give the model another alias (dbt's alias config), or leave it out with --exclude`;

  it(
    'refuses a model whose name a table of another environment holds; a no-change plan reads no table list',
    needs(skip),
    async () => {
      const { client, dev } = started as ProjectServer;
      log.length = 0;
      const plan = await planProject(client, dbtProjectOf('names', ['nm_orders', 'nm_taken']), {
        connectorId: dev,
      });
      expect(plan.tables.find((t) => t.table === 'nm_taken')).toMatchObject({
        action: 'refused',
        reason: heldElsewhere(takenId),
      });
      expect(plan.tables.find((t) => t.table === 'nm_orders')?.action).toBe('create');
      const lookups = tableListRequests(log);
      expect(lookups).toHaveLength(1);
      expect(lookups[0]).toMatch(/\/api\/tables\?name=nm_orders&name=nm_taken&limit=1000 /);

      const created = await planProject(client, dbtProjectOf('names', ['nm_orders']), { connectorId: dev });
      expect((await applyPlan(client, created, { describe: describeError })).failed).toEqual([]);
      log.length = 0;
      const again = await planProject(client, dbtProjectOf('names', ['nm_orders']), { connectorId: dev });
      expect(again.counts.unchanged).toBe(1);
      expect(tableListRequests(log)).toEqual([]);
    },
  );

  it(
    'against a service that refuses a repeated name, reads the whole list as before, with the same refusal',
    needs(skip),
    async () => {
      const { server, client, dev } = started as ProjectServer;
      const transport = createTransport({
        baseUrl: server.url,
        auth: staticToken(server.user('ADMIN').cliToken),
        logger: (line) => log.push(line),
      });
      const oldService: Transport = {
        ...transport,
        send: (request) => {
          const name = request.query?.name;
          if (Array.isArray(name) && name.length > 1)
            return Promise.reject(
              new ApiError({
                status: 400,
                code: 'invalid_query',
                message: 'name must be given once, with a value.',
                details: { parameter: 'name' },
                method: request.method,
                url: request.path,
              }),
            );
          return transport.send(request);
        },
      };
      try {
        log.length = 0;
        const plan = await planProject(
          { ...client, tables: tablesApi(oldService) },
          dbtProjectOf('names', ['nm_orders', 'nm_taken', 'nm_new']),
          { connectorId: dev },
        );
        expect(plan.tables.find((t) => t.table === 'nm_taken')).toMatchObject({
          action: 'refused',
          reason: heldElsewhere(takenId),
        });
        expect(plan.tables.find((t) => t.table === 'nm_new')?.action).toBe('create');
        // The refused request never left the stub: the list read whole, as before, is the one sent.
        expect(tableListRequests(log).map((line) => new URL(line.split(' ')[2] ?? '').search)).toEqual(['']);
      } finally {
        await transport.close();
      }
    },
  );

  it('asks for many names in groups within the URL limit, a table found once', needs(skip), async () => {
    const { client } = started as ProjectServer;
    const names = Array.from({ length: 1_200 }, (_, i) => `a_rather_long_model_name_number_${i}`);
    log.length = 0;
    const found = await client.tables.named([...names, 'customers', 'CUSTOMERS', 'nm_taken']);
    expect(found.map((t) => t.name).sort()).toEqual(['NM_Taken', 'customers']);
    const requests = tableListRequests(log);
    const queries = requests.map((line) => new URL(line.split(' ')[2] ?? '').search);
    expect(requests.length).toBeGreaterThan(1);
    expect(requests.length).toBeLessThanOrEqual(Math.ceil((names.length * 42) / 6_000) + 1);
    expect(queries.every((query) => query.length < 6_100)).toBe(true);
    expect(queries.every((query) => new URLSearchParams(query).getAll('name').length <= 500)).toBe(true);
  });
});
