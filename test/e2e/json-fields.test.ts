// Issue 23 item 7: the JSON FIELDS a command's help lists, and that `--json a,b` is checked against
// (src/cli/json-fields.ts), are the keys of the records it prints: each command runs against the reference
// server under --json and every record has exactly those keys.
import { beforeAll, afterAll, describe, expect, it } from 'vitest';
import { JSON_FIELDS } from '../../src/cli/json-fields.js';
import { ensureBuilt, runCli } from '../cli/helpers/cli-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

let server: TestServer;

beforeAll(async () => {
  [server] = await Promise.all([startTestServer(), ensureBuilt()]);
  // A gate job for `gate jobs` to list.
  const queued = await runCli(['gate', 'run', 'customers', '--gate', '2', '--json'], { env: credentials() });
  expect(queued.code, queued.stderr).toBe(0);
  // A change for `config history` to list.
  const set = await runCli(['config', 'set', 'gate3_required', 'true'], { env: credentials() });
  expect(set.code, set.stderr).toBe(0);
}, 60_000);

const credentials = () => ({ SERVICE_API_URL: server.url, SERVICE_TOKEN: server.user('OWNER').cliToken });

afterAll(async () => {
  await server?.close();
});

/** The arguments each command of the list runs with. */
const runs: Record<string, () => string[]> = {
  list: () => ['list'],
  'quarantine:list': () => ['quarantine', 'list'],
  status: () => ['status', 'customers'],
  'connectors:list': () => ['connectors', 'list'],
  'gate:jobs': () => ['gate', 'jobs', 'customers'],
  'gate:suggest': () => ['gate', 'suggest', 'customers'],
  'versions:list': () => ['versions', 'list', 'customers'],
  'audit:list': () => ['audit', 'list', '-L', '20'],
  'members:list': () => ['members', 'list'],
  'config:list': () => ['config', 'list'],
  'config:history': () => ['config', 'history', 'gate3_required'],
  whoami: () => ['whoami'],
};

describe('JSON FIELDS are the keys of the records printed', () => {
  it('every command with a field list is run here', () => {
    expect(Object.keys(runs).sort()).toEqual(Object.keys(JSON_FIELDS).sort());
  });

  it.each(Object.keys(JSON_FIELDS))('gds %s', async (id) => {
    const args = runs[id]?.() ?? [];
    const r = await runCli([...args, '--json'], { env: credentials() });
    expect(r.code, r.stderr).toBe(0);
    const records = r.stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records.length).toBeGreaterThan(0);
    for (const record of records)
      expect(Object.keys(record).sort()).toEqual([...(JSON_FIELDS[id] ?? [])].sort());
  });
});
