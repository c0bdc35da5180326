// A connector's name wherever its id goes (src/services/connector-ref.ts), against the in-process reference
// server: by id, by name in any case, an unknown one exit 5 with "did you mean" and the list; a MANAGEMENT
// token that may register definitions resolves names too (GET /api/connectors takes it), one that may not
// sends the reference as it is; and the warehouse objects a connector reads (GET /api/connectors/{id}/objects).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import { createApiClient, staticToken } from '../../src/client/index.js';
import type { ApiClient } from '../../src/client/index.js';
import { findConnector, resolveConnectorId } from '../../src/services/connector-ref.js';
import { planProject } from '../../src/services/project-plan.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

let server: TestServer;
let dev: string;
const clients: ApiClient[] = [];

function clientWith(token: string): ApiClient {
  const client = createApiClient({
    baseUrl: server.url,
    auth: staticToken(token),
    sleep: async () => {},
    logger: () => {},
  });
  clients.push(client);
  return client;
}

beforeAll(async () => {
  server = await startTestServer();
  dev = server.ready.connectors.find((c) => c.name === 'warehouse-dev')?.id ?? '';
});

afterAll(async () => {
  for (const client of clients) await client.close();
  await server?.close();
});

describe('--connector by id or name', () => {
  it('an id, a name and a name in another case give the id', async () => {
    const client = clientWith(server.user('ADMIN').cliToken);
    expect(await resolveConnectorId(client, dev)).toBe(dev);
    expect(await resolveConnectorId(client, 'warehouse-dev')).toBe(dev);
    expect(await resolveConnectorId(client, 'Warehouse-DEV')).toBe(dev);
  });

  it('an unknown one is exit 5 with the nearest name and every connector', async () => {
    const client = clientWith(server.user('ADMIN').cliToken);
    const error = await resolveConnectorId(client, 'warehuse-dev').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CliError);
    expect(error).toMatchObject({ exitCode: 5, code: 'connector_not_found' });
    expect((error as CliError).suggestion).toContain('Did you mean warehouse-dev?');
    expect((error as CliError).suggestion).toContain(`${dev}  warehouse-dev  dev`);
    const far = await resolveConnectorId(client, 'con_nosuch').catch((e: unknown) => e);
    expect(far).toMatchObject({ exitCode: 5 });
    expect((far as CliError).suggestion).toMatch(
      /^No connector con_nosuch in your workspace\. --connector takes a connector's id or name:\n/,
    );
  });

  it('two connectors of one name: exit 2 listing both ids', () => {
    const twins = [
      { id: 'con_a', name: 'wh', type: 'postgres', status: 'ACTIVE', environmentLabel: 'dev' },
      { id: 'con_b', name: 'WH', type: 'postgres', status: 'ACTIVE', environmentLabel: 'prod' },
    ];
    expect(() => findConnector(twins, 'wh')).toThrow(/2 connectors are named wh:\n {2}con_a/);
    expect(findConnector(twins, 'con_b').id).toBe('con_b');
  });

  it('a MANAGEMENT token with workspace:write:definition resolves names; one without sends the reference as it is', async () => {
    const definer = await server.issueToken('ADMIN', {
      name: 'ci-definitions',
      env: '*',
      scopes: ['workspace:write:definition'] as never,
    });
    expect(await resolveConnectorId(clientWith(definer.tokens.accessToken), 'warehouse-dev')).toBe(dev);
    const auditor = await server.issueToken('ADMIN', {
      name: 'ci-audit',
      env: '*',
      scopes: ['workspace:read:audit'] as never,
    });
    expect(await resolveConnectorId(clientWith(auditor.tokens.accessToken), 'warehouse-dev')).toBe(
      'warehouse-dev',
    );
  });

  it('plan takes the name (gds.yml connector: too), and an unknown one is exit 5 with did you mean', async () => {
    const client = clientWith(server.user('ADMIN').cliToken);
    const project = { projectName: 'shop', declarations: [], refusals: [], otherTests: [], warnings: [] };
    const plan = await planProject(client, project, { connectorId: 'warehouse-dev' });
    expect(plan.connector).toEqual({ id: dev, environmentLabel: 'dev' });
    const error = await planProject(client, project, { connectorId: 'warehouse-dve' }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ exitCode: 5, code: 'connector_not_found' });
    expect((error as CliError).suggestion).toContain('Did you mean warehouse-dev?');
  });

  it("GET /api/connectors/{id}/objects lists the tables of the connector's schema with their columns", async () => {
    await server.sql('CREATE TABLE analytics_dev.connector_ref_things (id integer, kind text)');
    const client = clientWith(server.user('MEMBER').cliToken);
    const objects = await client.connectors.objects(dev);
    expect(objects).toMatchObject({ connectorId: dev, schema: 'analytics_dev' });
    expect(objects.objects.find((o) => o.source === 'analytics_dev.connector_ref_things')).toEqual({
      source: 'analytics_dev.connector_ref_things',
      columns: [
        { name: 'id', type: 'integer' },
        { name: 'kind', type: 'text' },
      ],
    });
    const missing = await client.connectors.objects('con_nosuch').catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 404, code: 'connector_not_found' });
  });
});
