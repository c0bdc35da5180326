// `gds recertify --tables NAME` where tables over relations of that name in two schemas answer to the bare
// name (analytics_dev.parcels_v, crm.parcels_v, neither table named so): the service signals neither, and gds
// says so on stderr, naming both relations and how to pick one; `schema.table` signals that one alone.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { recertifyEnv, startRecertifyServer } from '../helpers/recertify-runs.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';

describe('recertify of a bare name two schemas’ tables answer to', () => {
  let server: TestServer;
  let dir: string;
  let token: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    ({ server, token } = await startRecertifyServer());
    dir = await mkdtemp(join(tmpdir(), 'gds-recertify-ambiguous-'));
    await server.sql('CREATE SCHEMA IF NOT EXISTS crm');
    await server.sql(
      `INSERT INTO gds.connectors (id, workspace_id, name, type, status, environment_label, warehouse_schema, created_at)
       VALUES ('con_crm', $1, 'crm-dev', 'postgres', 'ACTIVE', 'dev', 'crm', now())`,
      [server.ready.workspaceId],
    );
    const dev = server.ready.connectors.find((c) => c.name === 'warehouse-dev')?.id ?? '';
    for (const [name, schema, connectorId] of [
      ['analytics_parcels', 'analytics_dev', dev],
      ['crm_parcels', 'crm', 'con_crm'],
    ] as const) {
      await server.sql(`CREATE TABLE ${schema}.parcels_v (id integer)`);
      const response = await server.request('POST', '/api/artifacts', {
        token: server.user('ADMIN').cliToken,
        body: {
          filename: `${name}.yml`,
          content: `table: ${name}\nsource: ${schema}.parcels_v\ncolumns:\n  - name: id\n`,
          connectorId,
        },
      });
      expect(response.status).toBe(202);
      ids[name] = response.body.governanceId;
    }
  }, 120_000);

  afterAll(async () => {
    await server?.close();
  });

  const gds = (args: string[]): Promise<CliResult> =>
    runInProcess(args, { env: recertifyEnv(dir, server.url, token) });
  const versions = async () =>
    (
      await server.sql<{ name: string; data_version: number }>(
        'SELECT name, data_version FROM gds.tables WHERE id = ANY($1) ORDER BY name',
        [Object.values(ids)],
      )
    ).map((r) => `${r.name} ${r.data_version}`);

  it('signals neither, says which relations answer and how to name one; schema.table signals that one', async () => {
    const before = await versions();
    const r = await gds(['recertify', '--tables', 'parcels_v', '--env', 'dev']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/parcels_v\s+not_governed/);
    expect(r.stderr).toContain(
      'parcels_v was not signalled: tables over analytics_dev.parcels_v, crm.parcels_v answer to that name. ' +
        'Name the rebuilt one with its schema (--tables analytics_dev.parcels_v)',
    );
    expect(r.stderr).toContain('Environment dev: 1 submitted, 0 governed.');
    expect(await versions()).toEqual(before);

    const json = await gds(['recertify', '--tables', 'parcels_v', '--env', 'dev', '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout).outcomes).toEqual([
      {
        table: 'parcels_v',
        outcome: 'not_governed',
        driftDetected: false,
        ambiguous: ['analytics_dev.parcels_v', 'crm.parcels_v'],
      },
    ]);
    expect(await versions()).toEqual(before);

    const named = await gds(['recertify', '--tables', 'crm.parcels_v', '--env', 'dev', '--json']);
    expect(named.code).toBe(0);
    expect(JSON.parse(named.stdout)).toMatchObject({
      governed: 1,
      outcomes: [{ table: 'parcels_v', outcome: 'not_certified' }],
    });
    expect(await versions()).toEqual(['analytics_parcels 0', 'crm_parcels 1']);
    // On a terminal's table too, the relation it named.
    const human = await gds(['recertify', '--tables', 'crm.parcels_v', '--env', 'dev']);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/crm\.parcels_v\s+not_certified/);
  });
});
