// `gds records list|get|create|update|delete`: the real gds against the reference server, with a DATA-API
// token saved in an integration profile as a person would (`gds tokens issue … --save-profile`). Asserts exit
// codes, stdout vs stderr, every NDJSON line, and the server's rows after each write.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { cliCommand, ensureBuilt, runInTerminal } from '../cli/helpers/cli-process.js';
import type { Workspace } from './login-helpers.js';
import { ndjson, newWorkspace } from './login-helpers.js';

let server: TestServer;
let w: Workspace;
let crm: string;

beforeAll(async () => {
  [server, w] = await Promise.all([startTestServer(), newWorkspace(), ensureBuilt()]);
  crm = server.table('crm_contacts').id;
  const issued = await w.run(
    [
      'tokens',
      'issue',
      '--name',
      'loader',
      '--env',
      'dev',
      '--table',
      'crm_contacts:read,write',
      '--save-profile',
      'loader',
    ],
    { SERVICE_TOKEN: server.user('OWNER').cliToken, SERVICE_API_URL: server.url },
  );
  expect(issued.code, issued.stderr).toBe(0);
});

afterAll(async () => {
  await w.remove();
  await server.close();
});

const records = (args: string[], extra: Record<string, string> = {}) =>
  w.run(['records', ...args, '--profile', 'loader'], extra);

async function stored(id: string): Promise<Record<string, unknown> | undefined> {
  const rows = await server.sql('SELECT data FROM gds.records WHERE table_id = $1 AND id = $2', [crm, id]);
  return rows[0]?.data;
}

describe('gds records with a DATA-API profile', () => {
  it('creates, reads, changes and deletes a record by table name, the server holding each state', async () => {
    const created = await records([
      'create',
      'crm_contacts',
      '--data',
      '{"email":"lin@example.com","full_name":"Lin Wei","score":70}',
      '--json',
    ]);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const [record] = ndjson(created.stdout);
    expect(record).toMatchObject({ email: 'lin@example.com', full_name: 'Lin Wei', score: 70 });
    expect(await stored(record.id)).toEqual({ email: 'lin@example.com', full_name: 'Lin Wei', score: 70 });

    const got = await records(['get', 'crm_contacts', record.id, '--json']);
    expect(got.code, got.stderr).toBe(0);
    expect(ndjson(got.stdout)).toEqual([{ ...record }]);
    const human = await records(['get', crm, record.id]);
    expect(human.stdout).toMatch(new RegExp(`^id +${record.id}$`, 'm'));
    expect(human.stdout).toMatch(/^email +lin@example\.com$/m);

    const updated = await records(['update', 'crm_contacts', record.id], { GDS_JSON: '1' });
    expect(updated.code).toBe(2); // no --data or -f: stdin is read, and empty is not a JSON object
    const changed = await w.run(
      ['records', 'update', 'crm_contacts', record.id, '-f', '-', '--profile', 'loader'],
      {},
    );
    expect(changed.code).toBe(2);
    const patched = await records([
      'update',
      'crm_contacts',
      record.id,
      '--data',
      '{"score":71,"phone":null}',
      '--json',
    ]);
    expect(patched.code, patched.stderr).toBe(0);
    expect(ndjson(patched.stdout)[0]).toMatchObject({ id: record.id, score: 71, phone: null });
    expect(await stored(record.id)).toMatchObject({ score: 71, phone: null });

    const refused = await records(['delete', 'crm_contacts', record.id]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--yes');
    expect(await stored(record.id)).toBeDefined();

    const deleted = await records(['delete', 'crm_contacts', record.id, '--yes', '--json']);
    expect(deleted).toMatchObject({ code: 0, stderr: '' });
    expect(ndjson(deleted.stdout)).toEqual([{ tableId: crm, id: record.id, deleted: true }]);
    expect(await stored(record.id)).toBeUndefined();

    const gone = await records(['get', 'crm_contacts', record.id, '--json']);
    expect(gone.code).toBe(5);
    expect(gone.stdout).toBe('');
    expect(JSON.parse(gone.stderr.trim()).error.code).toBe('record_not_found');
  });

  it('lists one page: NDJSON under --json, the next page’s command on stderr for people, --search filters', async () => {
    const page = await records(['list', 'crm_contacts', '--limit', '2', '--json']);
    expect(page.code, page.stderr).toBe(0);
    const lines = ndjson(page.stdout);
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line.id).toMatch(/^rec_/);
    // The next page's cursor on a JSON line of stderr: a script pages on without the human footnote.
    const [more] = ndjson(page.stderr) as Array<{ next: { cursor: string; command: string } }>;
    expect(ndjson(page.stderr)).toHaveLength(1);
    expect(more?.next.command).toBe(
      `gds records list crm_contacts --limit 2 --cursor ${more?.next.cursor} --profile loader`,
    );
    const following = await records([
      'list',
      'crm_contacts',
      '--limit',
      '2',
      '--cursor',
      more?.next.cursor ?? '',
      '--json',
    ]);
    expect(ndjson(following.stdout).map((r) => r.id)).not.toContain(lines[0].id);

    const human = await records(['list', 'crm_contacts', '--limit', '2']);
    expect(human.code, human.stderr).toBe(0);
    const next = /--cursor (\S+)/.exec(human.stderr)?.[1];
    expect(next).toBeDefined();
    const second = await records(['list', 'crm_contacts', '--limit', '2', '--cursor', next ?? '', '--json']);
    const ids = ndjson(second.stdout).map((r) => r.id);
    expect(ids).toHaveLength(2);
    expect(ids).not.toContain(lines[0].id);

    const ada = await records(['list', 'crm_contacts', '--search', 'LOVELACE', '--json']);
    expect(ndjson(ada.stdout).map((r) => r.email)).toEqual(['ada@example.com']);
  });

  it('for people: the new id alone on stdout, each confirmation on stderr with ✓ and the table by name', async () => {
    const created = await records([
      'create',
      'crm_contacts',
      '--data',
      '{"email":"ida@example.com","full_name":"Ida"}',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const id = created.stdout.trim();
    expect(id).toMatch(/^rec_\w+$/);
    expect(created.stderr).toBe(`✓ Created record ${id} in crm_contacts.\n`);
    const updated = await records(['update', 'crm_contacts', id, '--data', '{"score":3}']);
    expect(updated).toMatchObject({ code: 0, stdout: '', stderr: `✓ Updated record ${id}: score.\n` });
    // A record as get --json prints it, edited and sent back: its own id is no change.
    const readBack = await records([
      'update',
      'crm_contacts',
      id,
      '--data',
      JSON.stringify({ id, score: 4 }),
    ]);
    expect(readBack).toMatchObject({ code: 0, stdout: '', stderr: `✓ Updated record ${id}: score.\n` });
    const deleted = await records(['delete', 'crm_contacts', id, '--yes']);
    expect(deleted).toMatchObject({
      code: 0,
      stdout: '',
      stderr: `✓ Deleted record ${id} of crm_contacts.\n`,
    });
    expect(await stored(id)).toBeUndefined();
    const switched = await w.run(['auth', 'switch', '--profile', 'loader']);
    expect(switched).toMatchObject({ code: 0, stdout: '' });
    expect(switched.stderr).toMatch(/^✓ loader is the active profile \(http:\/\/127\.0\.0\.1:\d+\/v1\)\.\n$/);
  });

  it('on a terminal, n at the question keeps the record: exit 1 not_confirmed (one JSON line under --json), as gds delete', async () => {
    const created = await records([
      'create',
      'crm_contacts',
      '--data',
      JSON.stringify({ email: 'keep@example.com', full_name: 'Kept' }),
      '--json',
    ]);
    const id = String(ndjson(created.stdout)[0]?.id);
    for (const json of [[], ['--json']]) {
      const [command, argv] = cliCommand([
        'records',
        'delete',
        'crm_contacts',
        id,
        '--profile',
        'loader',
        ...json,
      ]);
      const line = `stty cols 200 rows 40; ${[command, ...argv].map((a) => `'${a}'`).join(' ')}`;
      const { child, result } = runInTerminal(line, { ...w.env, NO_COLOR: '1' });
      let seen = '';
      child.stdout?.on('data', (chunk: Buffer) => (seen += chunk.toString('utf8')));
      for (let i = 0; i < 300 && !seen.includes('(y/N)'); i += 1) await sleep(50);
      expect(seen).toContain(`Delete record ${id} of crm_contacts`);
      child.stdin?.write('n\r');
      // stdout and stderr are the one terminal here.
      const r = await result;
      w.outputs.push(r.stdout);
      expect(r.code, r.stdout).toBe(1);
      expect(r.stdout).not.toContain('Nothing deleted');
      if (json.length > 0) expect(r.stdout).toContain('{"error":{"code":"not_confirmed"');
      else expect(r.stdout).toContain(`Not deleted: record ${id} of crm_contacts is unchanged.`);
    }
    expect(await stored(id)).toMatchObject({ email: 'keep@example.com' });
  });

  it('a table the token does not grant by name is exit 5 naming the ones it grants; a bad record is exit 7', async () => {
    const other = await records(['list', 'orders', '--json']);
    expect(other.code).toBe(5);
    const error = JSON.parse(other.stderr.trim()).error;
    expect(error.code).toBe('table_not_found');
    expect(error.suggestion).toContain(`crm_contacts (${crm})`);

    const bad = await records(['create', 'crm_contacts', '--data', '{"email":"x@example.com","shoe":1}']);
    expect(bad.code).toBe(7);
    expect(bad.stderr).toContain('full_name');
    expect(bad.stderr).toContain('shoe');
    const notObject = await records(['create', 'crm_contacts', '--data', '[1]']);
    expect(notObject.code).toBe(2);
  });
});
