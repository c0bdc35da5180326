// `gds config set KEY VALUE` with the value the key already holds changes nothing: "No change" (exit 0),
// no history entry, no audit entry; under --json the entry with changed:false, as gate apply says it.
// A gate_mode some table does not have yet is still a change (every table takes the workspace's).
// gds in the test process (runInProcess) against the in-process server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server?.close();
});

const gds = (args: string[]) =>
  runInProcess(args, { env: { SERVICE_API_URL: server.url, SERVICE_TOKEN: server.user('OWNER').cliToken } });

/** How many changes of `key` the history and the audit log hold. */
async function changes(key: string): Promise<{ history: number; audits: number }> {
  const [history] = await server.sql(
    'SELECT count(*)::int AS n FROM gds.workspace_config_history WHERE key = $1',
    [key],
  );
  const [audits] = await server.sql(
    `SELECT count(*)::int AS n FROM gds.audit_log
      WHERE action = 'WORKSPACE_CONFIG_CHANGED' AND details->>'key' = $1`,
    [key],
  );
  return { history: Number(history?.n), audits: Number(audits?.n) };
}

describe('config set of the value a key holds', () => {
  it('gate_mode ENFORCING twice: the first sets every table, the second is "No change", nothing written', async () => {
    const first = await gds(['config', 'set', 'gate_mode', 'ENFORCING', '--json']);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ key: 'gate_mode', value: 'ENFORCING', changed: true });
    const [advisory] = await server.sql(
      `SELECT count(*)::int AS n FROM gds.tables
        WHERE gate_mode <> 'ENFORCING' AND workspace_id = (SELECT workspace_id FROM gds.tables WHERE id = $1)`,
      [server.table('orders').id],
    );
    expect(advisory?.n).toBe(0);
    const before = await changes('gate_mode');

    const again = await gds(['config', 'set', 'gate_mode', 'ENFORCING']);
    expect(again).toMatchObject({ code: 0, stdout: '' });
    expect(again.stderr).toBe('✓ No change: gate_mode is already ENFORCING.\n');
    const json = await gds(['config', 'set', 'gate_mode', 'ENFORCING', '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ key: 'gate_mode', value: 'ENFORCING', changed: false });
    expect(await changes('gate_mode')).toEqual(before);
  });

  it('a key never set, to its default: "No change"; to another value: set', async () => {
    const before = await changes('inspection_policy');
    const same = await gds(['config', 'set', 'inspection_policy', 'none']);
    expect(same.code, same.stderr).toBe(0);
    expect(same.stderr).toBe('✓ No change: inspection_policy is already none.\n');
    expect(await changes('inspection_policy')).toEqual(before);

    const set = await gds(['config', 'set', 'inspection_policy', 'evidence_required']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stderr).toBe('✓ Set inspection_policy to evidence_required.\n');
    expect(await changes('inspection_policy')).toEqual({
      history: before.history + 1,
      audits: before.audits + 1,
    });
  });
});
