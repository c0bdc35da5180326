// Workspace configuration (list, set, history, who may set) and contract intent (set-intent with
// every other contract field carried forward).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';

type Role = 'OWNER' | 'ADMIN' | 'STEWARD' | 'MEMBER';
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server?.close();
});

const token = (role: Role) => server.user(role).accessToken;
const setConfig = (key: string, value: unknown, role: Role = 'ADMIN') =>
  server.request('PUT', `/api/config/${key}`, { token: token(role), body: { value } });
const configValue = async (key: string) => {
  const list = await server.request('GET', '/api/config', { token: token('MEMBER') });
  return (list.body.config as Array<{ key: string; value: string }>).find((e) => e.key === key)?.value;
};
const entry = (key: string, value: string, allowedValues: string[]) => ({
  key,
  value,
  allowedValues,
  updatedAt: null,
  updatedBy: null,
  updatedByEmail: null,
});

describe('workspace config', () => {
  it('lists every key with its default and allowed values to any member, CLI token included', async () => {
    const response = await server.request('GET', '/api/config', { token: server.user('MEMBER').cliToken });
    expect(response.status).toBe(200);
    expect(response.body.config).toEqual([
      entry('gate_mode', 'ENFORCING', ['ENFORCING', 'ADVISORY']),
      entry('gate3_required', 'false', ['true', 'false']),
      entry('inspection_policy', 'none', ['none', 'evidence_required']),
      entry('certified_view_after_rebuild', 'republish', ['republish', 'withhold']),
    ]);
  });

  it('refuses a MANAGEMENT token and a request without credential (401)', async () => {
    const management = await server.issueToken('ADMIN', {
      name: 'm',
      env: '*',
      scopes: ['workspace:read:audit'],
    });
    const withToken = await server.request('GET', '/api/config', { token: management.tokens.accessToken });
    expect(withToken.status).toBe(401);
    expect((await server.request('GET', '/api/config')).status).toBe(401);
  });

  it('lets only ADMIN or OWNER set a key: STEWARD and MEMBER get 403 and nothing changes', async () => {
    for (const role of ['STEWARD', 'MEMBER'] as const) {
      const response = await setConfig('gate3_required', 'true', role);
      expect(response.status).toBe(403);
      expect(response.body.error.code).toBe('role_too_low');
    }
    expect(await configValue('gate3_required')).toBe('false');
  });

  it('answers 400 naming the allowed keys or values, and changes nothing', async () => {
    const unknownKey = await setConfig('gate_speed', 'fast');
    expect(unknownKey.status).toBe(400);
    expect(unknownKey.body.error.code).toBe('unknown_config_key');
    expect(unknownKey.body.error.message).toContain('gate_mode, gate3_required, inspection_policy');
    const badValue = await setConfig('inspection_policy', 'sometimes');
    expect(badValue.status).toBe(400);
    expect(badValue.body.error.message).toContain('none, evidence_required');
    expect(badValue.body.error.details.allowedValues).toEqual(['none', 'evidence_required']);
    const noValue = await server.request('PUT', '/api/config/gate_mode', { token: token('ADMIN'), body: {} });
    expect(noValue.status).toBe(400);
    expect(await configValue('inspection_policy')).toBe('none');
    const history = await server.request('GET', '/api/config/inspection_policy/history', {
      token: token('MEMBER'),
    });
    expect(history.body.changes).toEqual([]);
    const unknownHistory = await server.request('GET', '/api/config/gate_speed/history', {
      token: token('MEMBER'),
    });
    expect(unknownHistory.status).toBe(400);
  });

  it('copies gate_mode onto every table, tables registered later and later audit entries, with the history of each change', async () => {
    const customers = server.table('customers').id;
    const advisory = await setConfig('gate_mode', 'ADVISORY', 'ADMIN');
    expect(advisory.status).toBe(200);
    expect(advisory.body).toMatchObject({
      key: 'gate_mode',
      value: 'ADVISORY',
      updatedBy: server.user('ADMIN').userId,
      updatedByEmail: server.user('ADMIN').email,
    });
    const modes = await server.sql<{ gate_mode: string }>(
      'SELECT DISTINCT gate_mode FROM gds.tables WHERE workspace_id = $1',
      [server.ready.workspaceId],
    );
    expect(modes).toEqual([{ gate_mode: 'ADVISORY' }]);
    const other = await server.sql<{ gate_mode: string }>(
      'SELECT DISTINCT gate_mode FROM gds.tables WHERE workspace_id = $1 ORDER BY gate_mode',
      [server.ready.otherWorkspace.workspaceId],
    );
    expect(other.map((r) => r.gate_mode)).toEqual(['ADVISORY', 'ENFORCING']);
    const pushed = await server.request('POST', '/api/artifacts', {
      token: token('STEWARD'),
      body: {
        filename: 'products.json',
        content: JSON.stringify({
          table: 'products',
          source: 'analytics_dev.products',
          columns: [{ name: 'sku', type: 'text' }],
        }),
        connectorId: server.ready.connectors.find((c) => c.name === 'warehouse-dev')?.id,
      },
    });
    expect(pushed.status).toBe(202);
    const [registered] = await server.sql('SELECT gate_mode FROM gds.tables WHERE id = $1', [
      pushed.body.governanceId,
    ]);
    expect(registered).toEqual({ gate_mode: 'ADVISORY' });

    const gateModeOfNextAudit = async (intent: string) => {
      const patched = await server.request('PATCH', `/api/tables/${customers}/semantic-contract`, {
        token: token('STEWARD'),
        body: { intent },
      });
      expect(patched.status).toBe(200);
      const audit = await server.request(
        'GET',
        '/api/workspace/audit-log?eventType=CONTRACT_INTENT_SET&limit=1',
        { token: token('ADMIN') },
      );
      return audit.body.entries[0].gateModeAtEvaluation as string;
    };
    expect(await gateModeOfNextAudit('METRIC')).toBe('ADVISORY');
    expect((await setConfig('gate_mode', 'ENFORCING', 'OWNER')).status).toBe(200);
    // Another value: setting the same one again writes no audit entry.
    expect(await gateModeOfNextAudit('DECISION')).toBe('ENFORCING');

    const history = await server.request('GET', '/api/config/gate_mode/history', { token: token('MEMBER') });
    expect(history.status).toBe(200);
    expect(history.body.key).toBe('gate_mode');
    expect(history.body.changes).toMatchObject([
      { oldValue: 'ENFORCING', newValue: 'ADVISORY', changedBy: server.user('ADMIN').userId },
      { oldValue: 'ADVISORY', newValue: 'ENFORCING', changedBy: server.user('OWNER').userId },
    ]);
    for (const change of history.body.changes) expect(Number.isNaN(Date.parse(change.changedAt))).toBe(false);
  });

  it('takes a JSON boolean for a true|false key', async () => {
    const response = await setConfig('gate3_required', true, 'OWNER');
    expect(response.status).toBe(200);
    expect(response.body.value).toBe('true');
    expect((await setConfig('gate3_required', false, 'OWNER')).body.value).toBe('false');
  });
});

describe('contract intent', () => {
  const patch = (tableId: string, body: unknown, role: Role = 'STEWARD') =>
    server.request('PATCH', `/api/tables/${tableId}/semantic-contract`, { token: token(role), body });

  it('sets a structured grain on registered columns and mirrors its keys on the table for Gate 1', async () => {
    const orders = server.table('orders').id;
    const response = await patch(orders, {
      grain: 'one row per order',
      meaning: 'Orders placed in the web shop',
      grainType: 'ONE_PER_ENTITY',
      grainKeyColumns: ['order_id'],
    });
    expect(response.status).toBe(200);
    expect(response.body.contract).toMatchObject({
      status: 'QUARANTINED',
      certifiedAt: null,
      grain: 'one row per order',
      grainType: 'ONE_PER_ENTITY',
      grainKeyColumns: ['order_id'],
      meaning: 'Orders placed in the web shop',
      intent: null,
      allowedConsumers: [],
    });
    const [row] = await server.sql('SELECT grain, grain_key_columns FROM gds.tables WHERE id = $1', [orders]);
    expect(row).toEqual({ grain: 'one row per order', grain_key_columns: ['order_id'] });
  });

  it('carries grain, meaning and the structured grain forward when only intent and consumers are set', async () => {
    const orders = server.table('orders').id;
    const response = await patch(orders, { intent: 'DECISION', allowedConsumers: ['HUMAN', 'AI'] });
    expect(response.status).toBe(200);
    expect(response.body.contract).toMatchObject({
      intent: 'DECISION',
      allowedConsumers: ['HUMAN', 'AI'],
      grain: 'one row per order',
      grainType: 'ONE_PER_ENTITY',
      grainKeyColumns: ['order_id'],
      meaning: 'Orders placed in the web shop',
    });
    const again = await patch(orders, { meaning: 'Orders, all channels' });
    expect(again.body.contract).toMatchObject({
      intent: 'DECISION',
      allowedConsumers: ['HUMAN', 'AI'],
      grain: 'one row per order',
      meaning: 'Orders, all channels',
    });
  });

  it('a PATCH of values the contract already holds changes nothing and writes no audit entry; GET reads it', async () => {
    const orders = server.table('orders').id;
    const audits = async () =>
      (
        await server.sql<{ n: number; updated: string }>(
          `SELECT (SELECT count(*)::int FROM gds.audit_log WHERE table_id = $1 AND action = 'CONTRACT_INTENT_SET') AS n,
                  (SELECT updated_at::text FROM gds.contracts WHERE table_id = $1) AS updated`,
          [orders],
        )
      )[0];
    const current = await server.request('GET', `/api/tables/${orders}/semantic-contract`, {
      token: token('STEWARD'),
    });
    expect(current.status).toBe(200);
    const before = await audits();
    const { intent, allowedConsumers, meaning } = current.body.contract;
    const same = await patch(orders, { intent, allowedConsumers, meaning });
    expect(same.status).toBe(200);
    expect(same.body).toEqual({ contract: current.body.contract, changed: false });
    expect(await audits()).toEqual(before);
    // An active table of this workspace without a contract (another workspace's or a deleted one is 404
    // table_not_found, whatever its contract).
    const [bare] = await server.sql<{ id: string }>(
      `SELECT id FROM gds.tables WHERE active AND workspace_id = $1
          AND id NOT IN (SELECT table_id FROM gds.contracts) ORDER BY id LIMIT 1`,
      [server.ready.workspaceId],
    );
    expect(bare).toBeDefined();
    const none = await server.request('GET', `/api/tables/${bare?.id}/semantic-contract`, {
      token: token('OWNER'),
    });
    expect(none.status).toBe(404);
    expect(none.body.error.code).toBe('contract_not_found');
  });

  it('refuses a half structured grain, unregistered key columns and unknown classes (400), changing nothing', async () => {
    const orders = server.table('orders').id;
    const cases: Array<[unknown, string]> = [
      [{ grainType: 'ONE_PER_ENTITY' }, 'grain_incomplete'],
      [{ grainKeyColumns: ['order_id'] }, 'grain_incomplete'],
      [{ grainType: 'ONE_PER_ENTITY', grainKeyColumns: [] }, 'grain_incomplete'],
      [{ grainType: null, grainKeyColumns: ['order_id'] }, 'grain_incomplete'],
      [{ grainType: null }, 'grain_incomplete'],
      [{ grainType: 'ONE_PER_ENTITY', grainKeyColumns: ['order_no'] }, 'unknown_grain_columns'],
      [{ intent: 'VIBES' }, 'invalid_body'],
      [{ allowedConsumers: ['HUMAN', 'ROBOTS'] }, 'invalid_body'],
    ];
    for (const [body, code] of cases) {
      const response = await patch(orders, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.code).toBe(code);
    }
    const [row] = await server.sql('SELECT grain_key_columns FROM gds.tables WHERE id = $1', [orders]);
    expect(row.grain_key_columns).toEqual(['order_id']);
  });

  it('clears the structured grain with grainType null and no key columns, on the table too; the rest carries forward', async () => {
    const orders = server.table('orders').id;
    const response = await patch(orders, { grainType: null, grainKeyColumns: [] });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      changed: true,
      contract: { grainType: null, grainKeyColumns: [], grain: 'one row per order', intent: 'DECISION' },
    });
    const [row] = await server.sql('SELECT grain_key_columns FROM gds.tables WHERE id = $1', [orders]);
    expect(row.grain_key_columns).toEqual([]);
    const again = await patch(orders, { grainType: null, grainKeyColumns: [] });
    expect(again.body.changed).toBe(false);
  });

  it('lets the table owner or a STEWARD and above set intent: others get 403, unknown tables 404', async () => {
    const member = await patch(server.table('customers').id, { intent: 'METRIC' }, 'MEMBER');
    expect(member.status).toBe(403);
    const owner = await patch(server.table('orders').id, { intent: 'OPERATIONAL' }, 'MEMBER');
    expect(owner.status).toBe(200);
    const production = await patch(server.table('customers_production').id, { intent: 'METRIC' }, 'STEWARD');
    expect(production.status).toBe(403);
    expect(production.body.error.code).toBe('environment_forbidden');
    const missing = await patch('tbl_nope', { intent: 'METRIC' });
    expect(missing.status).toBe(404);
  });
});
