// The narrowest scope (workspace:write:recertify) cannot take the audit log down. Evidence
// over 64 KB serialized is 413 naming the limit with nothing stamped; twelve signals of the largest evidence
// accepted leave an audit log that `audit-log?limit=200` answers in a bounded page and `gds audit list --all`
// reads whole; entries stored oversized before the bound are returned truncated, with a marker.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;
let recertifyToken: string;
let tableId: string;
const LIMIT = 64 * 1024;

/** An evidence object whose JSON is exactly `bytes` long. */
function evidenceOf(bytes: number): Record<string, unknown> {
  const shell = JSON.stringify({ kind: 'dbt', runId: 'run-1', summary: '' });
  return { kind: 'dbt', runId: 'run-1', summary: 'x'.repeat(bytes - shell.length) };
}

const signal = (evidence: unknown) =>
  server.request('POST', '/api/workspace/recertify', {
    token: recertifyToken,
    body: { tables: ['bound_probe'], environmentLabel: 'dev', evidence },
  });

const stamped = async () =>
  Number(
    (await server.sql(`SELECT count(*)::int AS n FROM gds.audit_log WHERE action = 'RECERTIFY_SIGNAL'`))[0].n,
  );

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
  const devConnector = server.ready.connectors.find((c) => c.name === 'warehouse-dev')?.id;
  const pushed = await server.request('POST', '/api/artifacts', {
    token: server.user('ADMIN').cliToken,
    body: {
      filename: 'bound_probe.yml',
      content: 'table: bound_probe\nsource: analytics_dev.categorydim\ncolumns:\n  - name: category_id\n',
      connectorId: devConnector,
    },
  });
  expect(pushed.status).toBe(202);
  tableId = pushed.body.governanceId;
  await server.sql('UPDATE gds.tables SET state = $2 WHERE id = $1', [tableId, 'CERTIFIED']);
  recertifyToken = (
    await server.issueToken('ADMIN', {
      name: 'pipeline',
      env: '*',
      scopes: ['workspace:write:recertify'] as never,
    })
  ).tokens.accessToken;
});

afterAll(async () => {
  await server?.close();
});

describe('evidence is a summary', () => {
  it('answers 413 naming the 64 KB limit for evidence one byte over it, and stamps nothing', async () => {
    const before = await stamped();
    const [state] = await server.sql('SELECT data_version FROM gds.tables WHERE id = $1', [tableId]);
    const response = await signal(evidenceOf(LIMIT + 1));
    expect(response.status).toBe(413);
    expect(response.body.error.code).toBe('evidence_too_large');
    expect(response.body.error.message).toContain('64 KB');
    expect(response.body.error.details).toMatchObject({ field: 'evidence', limitBytes: LIMIT });
    expect(await stamped()).toBe(before);
    const [after] = await server.sql('SELECT data_version FROM gds.tables WHERE id = $1', [tableId]);
    expect(after.data_version).toBe(state.data_version);
  });

  it('accepts twelve signals of the largest evidence; the audit log still reads, page and --all', async () => {
    for (let i = 0; i < 12; i += 1) {
      const response = await signal(evidenceOf(LIMIT));
      expect(response.status).toBe(200);
      expect(response.body.outcomes[0].outcome).toBe('recert_filed');
    }
    // Entries written oversized before the bound existed (as the probe left them in a data directory).
    const [workspace] = await server.sql('SELECT workspace_id FROM gds.tables WHERE id = $1', [tableId]);
    for (let i = 0; i < 3; i += 1) {
      await server.sql(
        `INSERT INTO gds.audit_log (id, workspace_id, user_id, table_id, action, resource, details, created_at)
         VALUES ($1, $2, NULL, $3, 'RECERTIFY_SIGNAL', 'table', $4::jsonb, now())`,
        [
          `aud_legacy_${i}`,
          workspace.workspace_id,
          tableId,
          JSON.stringify({ evidence: { blob: 'y'.repeat(6 * 1024 * 1024) } }),
        ],
      );
    }
    const page = await fetch(`${server.url}/api/workspace/audit-log?limit=200`, {
      headers: { authorization: `Bearer ${server.user('OWNER').accessToken}` },
    });
    const text = await page.text();
    expect(page.status).toBe(200);
    expect(Buffer.byteLength(text)).toBeLessThan(5 * 1024 * 1024);
    const body = JSON.parse(text);
    const legacy = body.entries.filter((e: { id: string }) => e.id.startsWith('aud_legacy_'));
    expect(legacy).toHaveLength(3);
    for (const entry of legacy) {
      expect(entry.details).toMatchObject({ truncated: true, keys: ['evidence'] });
      expect(entry.details.originalBytes).toBeGreaterThan(6 * 1024 * 1024);
    }
    const whole = body.entries.filter(
      (e: { action: string; details?: { evidence?: { summary?: string } } }) =>
        e.action === 'RECERTIFY_SIGNAL' && e.details?.evidence?.summary?.length,
    );
    expect(whole.length).toBeGreaterThan(0);

    const all = await runInProcess(['audit', 'list', '--all', '--json'], {
      env: {
        GDS_CONFIG_DIR: await mkdtemp(join(tmpdir(), 'gds-audit-bound-')),
        GDS_SECRET_STORAGE: 'file',
        SERVICE_API_URL: server.url,
        SERVICE_TOKEN: server.user('OWNER').cliToken,
      },
    });
    expect(all.stderr).toBe('');
    expect(all.code).toBe(0);
    const lines = all.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    const [total] = await server.sql('SELECT count(*)::int AS n FROM gds.audit_log WHERE workspace_id = $1', [
      workspace.workspace_id,
    ]);
    expect(lines).toHaveLength(total.n);
    expect(lines.filter((e) => e.action === 'RECERTIFY_SIGNAL').length).toBeGreaterThanOrEqual(15);
  });
});
