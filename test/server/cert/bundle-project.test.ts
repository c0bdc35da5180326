// The project a bundle carries (`gds env promote --bundle-out` / `--bundle-in`, `--dest-profile`): the source
// table's, covered by the seal; its import records on the table it registers what a promotion would (an id
// derived from where the table was made the target connector's), never on a table already there, and a bundle
// written before bundles carried one still imports, recording none. A bundle is a file anyone can seal: the
// project it names is checked as a push's is and takes no table over.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleDigest } from '../../../src/core/bundle-seal.js';
import { ENGINES } from '../../helpers/engines.js';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';
import { needs } from '../../helpers/skip.js';

describe.each(ENGINES)('a bundle’s project on $engine', ({ postgres, skip }) => {
  let server: TestServer;
  const connector = (env: string) =>
    server.ready.connectors.find((c) => c.environmentLabel === env && c.name.startsWith('warehouse-'))?.id ??
    '';
  const projectOf = async (id: string) =>
    (
      (await server.sql('SELECT project FROM gds.tables WHERE id = $1', [id])) as { project: string | null }[]
    )[0]?.project;
  const bundleOf = async (tableId: string) =>
    (await server.request('GET', `/api/tables/${tableId}/bundle`, { token: server.user('OWNER').cliToken }))
      .body as Record<string, unknown> & { table: Record<string, unknown> };
  const sealed = (body: Record<string, unknown>) => {
    const { sha256: _seal, ...rest } = body;
    return { ...rest, sha256: bundleDigest(rest) };
  };
  const importBundle = (body: unknown) =>
    server.request('POST', '/api/bundles', { token: server.user('OWNER').accessToken, body });
  const tableCount = async () => server.sql('SELECT count(*)::int AS n FROM gds.tables');

  beforeAll(async () => {
    if (skip !== undefined) return;
    server = await startTestServer({
      jobs: 'manual',
      ...(postgres ? { database: 'postgres' as const } : {}),
    });
    await server.sql('UPDATE gds.tables SET project = $2 WHERE id = $1', [
      server.table('orders').id,
      `shop@${connector('dev')}`,
    ]);
    await server.sql('UPDATE gds.tables SET project = $2 WHERE id = $1', [
      server.table('customers_production').id,
      'billing',
    ]);
  });

  afterAll(() => server?.close());

  it(
    'carries the source table’s project and connector under the seal, and none for a table without one',
    needs(skip),
    async () => {
      const bundle = await bundleOf(server.table('orders').id);
      expect(bundle.table).toMatchObject({
        project: `shop@${connector('dev')}`,
        connectorId: connector('dev'),
      });
      expect(bundle['sha256']).toBe(bundleDigest(bundle));
      const changed = { ...bundle, table: { ...bundle.table, project: 'other' } };
      const tampered = await importBundle({ ...changed, connectorId: connector('staging') });
      expect(tampered.status).toBe(400);
      expect(tampered.body.error.code).toBe('bundle_tampered');
      const none = await bundleOf(server.table('customers').id);
      expect(none.table).not.toHaveProperty('project');
    },
  );

  it(
    'records a derived project as the target connector’s on the table its import registers',
    needs(skip),
    async () => {
      const bundle = await bundleOf(server.table('orders').id);
      const response = await importBundle({ ...bundle, connectorId: connector('staging') });
      expect(response.status).toBe(202);
      expect(await projectOf(response.body.tableId)).toBe(`shop@${connector('staging')}`);
    },
  );

  it('imports a bundle written before bundles carried a project, recording none', needs(skip), async () => {
    const {
      project: _project,
      connectorId: _connector,
      ...table
    } = (await bundleOf(server.table('orders').id)).table;
    const older = sealed({ ...(await bundleOf(server.table('orders').id)), table });
    const response = await importBundle({ ...older, connectorId: connector('production') });
    expect(response.status).toBe(202);
    expect(await projectOf(response.body.tableId)).toBeNull();
  });

  it(
    'a replacement keeps the target’s own project, whatever project the bundle names',
    needs(skip),
    async () => {
      const target = server.table('customers_production');
      const bundle = await bundleOf(server.table('customers').id);
      // A definition of one column fewer, so that the import writes.
      const artifact = bundle['artifact'] as { content: string };
      const document = JSON.parse(artifact.content) as { columns: unknown[] };
      const content = JSON.stringify({ ...document, columns: document.columns.slice(0, -1) });
      const handMade = sealed({
        ...bundle,
        table: { ...bundle.table, project: 'intruder' },
        artifact: { ...artifact, content },
      });
      const response = await importBundle({
        ...handMade,
        connectorId: connector('production'),
        replaceId: target.id,
      });
      expect(response.status).toBe(202);
      expect(response.body.tableId).toBe(target.id);
      expect(await projectOf(target.id)).toBe('billing');
    },
  );

  it('refuses a project no push may name (400), registering nothing', needs(skip), async () => {
    const bundle = await bundleOf(server.table('orders').id);
    const before = await tableCount();
    for (const project of ['shop\u001b[2J', ' shop', 'x'.repeat(201), '']) {
      const handMade = sealed({ ...bundle, table: { ...bundle.table, project } });
      const response = await importBundle({
        ...handMade,
        connectorId: connector('staging'),
      });
      expect(response.status, JSON.stringify(project)).toBe(400);
    }
    expect(await tableCount()).toEqual(before);
  });
});
