// Environment promotion and portable bundles: a Mode A definition registered in another environment
// through the push rules, carrying its gate1.yml and contract; bundles sealed by sha256.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addIdleEnvironment } from '../../helpers/idle-environment.js';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';

let server: TestServer;
let orders: string;
const GATE1 =
  'patternChecks:\n  - name: status_known\n    column: status\n    regex: "^(SHIPPED|PENDING|REFUNDED)$"\n    severity: HARD_FAIL\n';

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
  orders = server.table('orders').id;
  await server.sql(
    `INSERT INTO gds.gate1_versions (table_id, version, content, created_by, created_at) VALUES ($1, 1, $2, $3, now())`,
    [orders, GATE1, server.user('STEWARD').userId],
  );
  await server.sql('UPDATE gds.tables SET gate1_version = 1 WHERE id = $1', [orders]);
  const intent = await server.request('PATCH', `/api/tables/${orders}/semantic-contract`, {
    token: server.user('STEWARD').accessToken,
    body: {
      intent: 'METRIC',
      grain: 'one row per order',
      grainType: 'ONE_PER_ENTITY',
      grainKeyColumns: ['order_id'],
    },
  });
  expect(intent.status).toBe(200);
});

afterAll(async () => {
  await server?.close();
});

const connector = (name: string) => server.ready.connectors.find((c) => c.name === name)?.id ?? '';
const bundleOf = async (tableId: string) =>
  (await server.request('GET', `/api/tables/${tableId}/bundle`, { token: server.user('STEWARD').cliToken }))
    .body;
const importBundle = (body: unknown, role: 'OWNER' | 'STEWARD' = 'STEWARD') =>
  server.request('POST', '/api/bundles', { token: server.user(role).accessToken, body });
/** The actions of the table's newest audit entries, newest first, as the log answers them. */
const newestActions = async (tableId: string, count: number): Promise<string[]> => {
  const log = await server.request('GET', '/api/workspace/audit-log', {
    token: server.user('ADMIN').accessToken,
  });
  return log.body.entries
    .filter((e: { tableId: string }) => e.tableId === tableId)
    .slice(0, count)
    .map((e: { action: string }) => e.action);
};
const canonical = (value: unknown): string =>
  Array.isArray(value)
    ? `[${value.map(canonical).join(',')}]`
    : value !== null && typeof value === 'object'
      ? `{${Object.keys(value)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
          .join(',')}}`
      : JSON.stringify(value);

describe('bundles', () => {
  it('exports the definition, gate1.yml and contract, sealed by a sha256 over the canonical JSON of the rest', async () => {
    const bundle = await bundleOf(orders);
    expect(bundle).toMatchObject({
      format: 'gds-bundle',
      formatVersion: 1,
      table: { name: 'orders', mode: 'MODE_A', environmentLabel: 'dev', source: 'analytics_dev.orders' },
      artifact: { filename: 'orders.json', mimeType: 'json' },
      gate1: { version: 1, content: GATE1 },
      contract: { intent: 'METRIC', grain: 'one row per order', grainKeyColumns: ['order_id'] },
    });
    const { sha256, ...rest } = bundle;
    expect(sha256).toBe(createHash('sha256').update(canonical(rest)).digest('hex'));
    expect(JSON.parse(bundle.artifact.content).columns.map((c: { name: string }) => c.name)).toEqual([
      'id',
      'order_id',
      'customer_id',
      'amount',
      'status',
      'ordered_on',
    ]);
  });

  it('refuses a tampered bundle and an unknown format version (400), registering nothing', async () => {
    const bundle = await bundleOf(orders);
    const before = await server.sql('SELECT count(*)::int AS n FROM gds.tables');
    const tampered = await importBundle({
      ...bundle,
      artifact: { ...bundle.artifact, content: bundle.artifact.content.replace('"status"', '"state"') },
      connectorId: connector('warehouse-staging'),
    });
    expect(tampered.status).toBe(400);
    expect(tampered.body.error.code).toBe('bundle_tampered');
    const future = await importBundle({
      ...bundle,
      formatVersion: 2,
      connectorId: connector('warehouse-staging'),
    });
    expect(future.status).toBe(400);
    expect(future.body.error.code).toBe('unsupported_bundle_format');
    expect(await server.sql('SELECT count(*)::int AS n FROM gds.tables')).toEqual(before);
  });

  it('refuses a bundle that says it is of a Mode B table (400 not_promotable), as its export is refused', async () => {
    const { sha256: _sha256, ...body } = await bundleOf(orders);
    const custody = { ...body, table: { ...body.table, mode: 'MODE_B' } };
    const sealed = { ...custody, sha256: createHash('sha256').update(canonical(custody)).digest('hex') };
    const before = await server.sql('SELECT count(*)::int AS n FROM gds.tables');
    const response = await importBundle({ ...sealed, connectorId: connector('warehouse-staging') });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'not_promotable', details: { mode: 'MODE_B' } });
    expect(response.body.error.message).toContain('Mode B (custody)');
    expect(await server.sql('SELECT count(*)::int AS n FROM gds.tables')).toEqual(before);
  });

  it('round-trips: importing on the staging connector registers orders_staging with its rules and contract', async () => {
    const bundle = await bundleOf(orders);
    const response = await importBundle({ ...bundle, connectorId: connector('warehouse-staging') });
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({
      environmentLabel: 'staging',
      connectorId: connector('warehouse-staging'),
      job: { type: 'gate-baseline-auto', status: 'QUEUED' },
    });
    const [table] = await server.sql(
      'SELECT name, state, environment_label, source, grain_key_columns, gate1_version FROM gds.tables WHERE id = $1',
      [response.body.tableId],
    );
    expect(table).toEqual({
      name: 'orders_staging',
      state: 'QUARANTINED',
      environment_label: 'staging',
      source: 'analytics_staging.orders',
      grain_key_columns: ['order_id'],
      gate1_version: 1,
    });
    // The import first, then what it did (newest first).
    expect(await newestActions(response.body.tableId, 3)).toEqual([
      'GATE1_APPLIED',
      'DEFINITION_REGISTERED',
      'BUNDLE_IMPORTED',
    ]);
    const exported = await bundleOf(response.body.tableId);
    expect(exported.gate1.content).toBe(GATE1);
    expect(exported.contract).toEqual(bundle.contract);
  });
});

describe('promotion', () => {
  const promote = (tableId: string, body: unknown, role: 'OWNER' | 'STEWARD' | 'MEMBER' = 'OWNER') =>
    server.request('POST', `/api/tables/${tableId}/promotions`, {
      token: server.user(role).accessToken,
      body,
    });

  it('refuses to replace the table already in the target environment (409 naming it) until replaceId names it', async () => {
    const customers = server.table('customers').id;
    const production = server.table('customers_production');
    const state = () =>
      server.sql(
        `SELECT t.name, t.state, t.source, t.definition_version,
                (SELECT count(*)::int FROM gds.audit_log a WHERE a.table_id = t.id) AS audits
           FROM gds.tables t WHERE t.id = $1`,
        [production.id],
      );
    const rules = GATE1.replaceAll('status', 'email').replace('^(SHIPPED|PENDING|REFUNDED)$', '@');
    await server.sql(
      `INSERT INTO gds.gate1_versions (table_id, version, content, created_by, created_at) VALUES ($1, 1, $2, $3, now())`,
      [customers, rules, server.user('STEWARD').userId],
    );
    await server.sql('UPDATE gds.tables SET gate1_version = 1 WHERE id = $1', [customers]);
    const before = await state();
    const refused = await promote(customers, { to: 'production' });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({
      code: 'promotion_target_exists',
      details: { governanceId: production.id },
    });
    expect(refused.body.error.message).toContain(`--replace ${production.id}`);
    const preview = await promote(customers, { to: 'production', dryRun: true });
    expect(preview.status).toBe(200);
    expect(preview.body.changed).toBe(true);
    expect(preview.body.diff).toContain('+++ customers@dev');
    expect(preview.body.diff).toContain('+      name: email_known');
    expect(await state()).toEqual(before);

    const response = await promote(customers, { to: 'production', replaceId: production.id });
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({
      changed: true,
      tableId: production.id,
      environmentLabel: 'production',
      connectorId: connector('warehouse-production'),
    });
    const [table] = await server.sql('SELECT name, state, source FROM gds.tables WHERE id = $1', [
      production.id,
    ]);
    expect(table).toEqual({
      name: 'customers_production',
      state: 'QUARANTINED',
      source: 'analytics_prod.customers',
    });
    const audit = await server.request('GET', '/api/workspace/audit-log?eventType=TABLE_PROMOTED&limit=1', {
      token: server.user('ADMIN').accessToken,
    });
    expect(audit.body.entries[0]).toMatchObject({ tableId: production.id, environmentLabel: 'production' });
    // The promotion first, then what it caused (newest first): the replacement of the CERTIFIED table, the
    // recertification request the replacement filed, and the rules landed.
    expect(await newestActions(production.id, 4)).toEqual([
      'GATE1_APPLIED',
      'RECERTIFICATION_REQUESTED',
      'DEFINITION_REPLACED',
      'TABLE_PROMOTED',
    ]);
  });

  it('promoting again what the target already holds changes nothing, with or without replaceId', async () => {
    const customers = server.table('customers').id;
    const production = server.table('customers_production');
    await server.sql(`UPDATE gds.tables SET state = 'CERTIFIED' WHERE id = $1`, [production.id]);
    const counts = () =>
      server.sql(
        `SELECT t.state, t.definition_version, t.gate1_version,
                (SELECT count(*)::int FROM gds.audit_log a WHERE a.table_id = t.id) AS audits,
                (SELECT count(*)::int FROM gds.jobs j WHERE j.table_id = t.id) AS jobs,
                (SELECT count(*)::int FROM gds.recertification_requests r WHERE r.table_id = t.id) AS requests
           FROM gds.tables t WHERE t.id = $1`,
        [production.id],
      );
    const before = await counts();
    const preview = await promote(customers, { to: 'production', dryRun: true });
    expect(preview.body).toEqual({ changed: false, diff: '' });
    for (const body of [{ to: 'production' }, { to: 'production', replaceId: production.id }]) {
      const response = await promote(customers, body);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ changed: false, tableId: production.id });
    }
    expect(await counts()).toEqual(before);
    expect(before[0]).toMatchObject({ state: 'CERTIFIED' });
  });

  it('new gate1.yml rules landed on a CERTIFIED table holding the same definition file a recertification request, as gate apply does', async () => {
    const customers = server.table('customers').id;
    const production = server.table('customers_production');
    await server.sql(`UPDATE gds.tables SET state = 'CERTIFIED' WHERE id = $1`, [production.id]);
    const rules = GATE1.replaceAll('status', 'email').replace('^(SHIPPED|PENDING|REFUNDED)$', '@.+[.]');
    await server.sql(
      `INSERT INTO gds.gate1_versions (table_id, version, content, created_by, created_at)
       SELECT $1, gate1_version + 1, $2, $3, now() FROM gds.tables WHERE id = $1`,
      [customers, rules, server.user('STEWARD').userId],
    );
    await server.sql('UPDATE gds.tables SET gate1_version = gate1_version + 1 WHERE id = $1', [customers]);
    const response = await promote(customers, { to: 'production', replaceId: production.id });
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({ changed: true, tableId: production.id });
    const [table] = await server.sql(
      `SELECT t.state, (SELECT content FROM gds.gate1_versions g WHERE g.table_id = t.id
                         ORDER BY version DESC LIMIT 1) AS rules
         FROM gds.tables t WHERE t.id = $1`,
      [production.id],
    );
    expect(table).toEqual({ state: 'CERTIFIED', rules });
    const requests = await server.sql(
      `SELECT status, details->>'reason' AS reason FROM gds.recertification_requests
        WHERE table_id = $1 AND cause = 'manual'`,
      [production.id],
    );
    expect(requests).toEqual([{ status: 'OPEN', reason: 'gate1.yml applied' }]);
    const audit = await server.request('GET', '/api/workspace/audit-log?eventType=GATE1_APPLIED&limit=1', {
      token: server.user('ADMIN').accessToken,
    });
    expect(audit.body.entries[0]).toMatchObject({ tableId: production.id, resource: 'gate_rules' });
    expect(await newestActions(production.id, 3)).toEqual([
      'RECERTIFICATION_REQUESTED',
      'GATE1_APPLIED',
      'TABLE_PROMOTED',
    ]);
  });

  it('refuses the same environment, an unknown environment (404), an environment without connector, and a connector of another environment (400)', async () => {
    const same = await promote(orders, { to: 'dev' });
    expect(same.status).toBe(400);
    expect(same.body.error.code).toBe('same_environment');
    const unknown = await promote(orders, { to: 'prod' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({
      code: 'environment_not_found',
      details: {
        environmentLabel: 'prod',
        environments: ['dev', 'production', 'staging'],
        didYouMean: 'production',
      },
    });
    // qa is the owner's to act in: what is left to say is that it has no active connector.
    await addIdleEnvironment(server, 'qa', ['owner@example.com']);
    const none = await promote(orders, { to: 'qa' });
    expect(none.status).toBe(400);
    expect(none.body.error.code).toBe('no_connector_for_environment');
    expect(none.body.error.message).not.toContain('connectorId');
    const wrong = await promote(orders, { to: 'staging', connectorId: connector('warehouse-production') });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.code).toBe('connector_environment_mismatch');
    const modeB = await promote(server.table('crm_contacts').id, { to: 'staging' });
    expect(modeB.status).toBe(400);
    expect(modeB.body.error).toMatchObject({
      code: 'not_promotable',
      details: { name: 'crm_contacts', mode: 'MODE_B' },
    });
    expect(modeB.body.error.message).toContain('docs/spec-deviations.md');
  });

  it('keeps callers to their environments (403), and answers 404 for an unknown table', async () => {
    const member = await promote(orders, { to: 'staging' }, 'MEMBER');
    expect(member.status).toBe(403);
    const steward = await promote(server.table('customers_production').id, { to: 'staging' }, 'STEWARD');
    expect(steward.status).toBe(403);
    expect(steward.body.error.message).toContain('table');
    const target = await promote(orders, { to: 'production' }, 'STEWARD');
    expect(target.status).toBe(403);
    expect(target.body.error.message).toBe(
      'You may act only in dev, staging; production, the environment you promote to, is outside your scope. Promote to one of those, or ask a workspace admin to add production to your environment scope.',
    );
    expect((await promote('tbl_none', { to: 'staging' })).status).toBe(404);
  });

  it('tells a scoped caller an unknown environment among its own, then its scope, before the connector', async () => {
    await addIdleEnvironment(server, 'qa');
    // qa exists and has no active connector: outside a STEWARD's dev, staging, that is the first thing to say.
    const outside = await promote(orders, { to: 'qa' }, 'STEWARD');
    expect(outside.status).toBe(403);
    expect(outside.body.error.message).toContain('qa, the environment you promote to, is outside your scope');
    // A typo is unknown among the environments the STEWARD may use: production is not offered.
    const typo = await promote(orders, { to: 'prodd' }, 'STEWARD');
    expect(typo.status).toBe(404);
    expect(typo.body.error.details).toEqual({ environmentLabel: 'prodd', environments: ['dev', 'staging'] });
    const near = await promote(orders, { to: 'stagin' }, 'STEWARD');
    expect(near.body.error.details).toMatchObject({ didYouMean: 'staging' });
  });
});
