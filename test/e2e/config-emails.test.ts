// `config list` names who changed a key by e-mail, as `config history` does (was the user id).
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

describe('config list', () => {
  it('shows the e-mail of who changed a key, piped and under --json', async () => {
    const env = { SERVICE_API_URL: server.url, SERVICE_TOKEN: server.user('OWNER').cliToken };
    const email = server.user('OWNER').email;
    const set = await runInProcess(['config', 'set', 'gate3_required', 'true'], { env });
    expect(set.code, set.stderr).toBe(0);
    const piped = await runInProcess(['config', 'list'], { env });
    expect(piped.code, piped.stderr).toBe(0);
    const row = piped.stdout.split('\n').find((line) => line.startsWith('gate3_required\t'));
    expect(row?.split('\t').at(-1)).toBe(email);
    expect(piped.stdout).not.toMatch(/\tusr_/);
    const json = await runInProcess(['config', 'list', '--json', 'key,updatedBy,updatedByEmail'], { env });
    const record = json.stdout
      .split('\n')
      .filter(Boolean)
      .map(
        (line) =>
          JSON.parse(line) as { key: string; updatedBy: string | null; updatedByEmail: string | null },
      )
      .find((r) => r.key === 'gate3_required');
    expect(record).toMatchObject({ updatedByEmail: email });
    expect(record?.updatedBy).toMatch(/^usr_/);
    const history = await runInProcess(['config', 'history', 'gate3_required'], { env });
    expect(history.stdout).toContain(email);
  });
});
