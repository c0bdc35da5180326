// An unknown command, with or without arguments, on a terminal or
// piped, gets the command meant as a suggestion and is never run (exit 2); `gds version` prints the
// version; enum values get "did you mean" (config set values, audit list --event-type). gds in the test
// process (runInProcess), and a real process in a pseudo-terminal for what a terminal shows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCommand, ensureBuilt, runInTerminal } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;

beforeAll(async () => {
  [server] = await Promise.all([startTestServer(), ensureBuilt()]);
});

afterAll(async () => {
  await server?.close();
});

const env = (role: 'OWNER' | 'MEMBER' = 'OWNER') => ({
  SERVICE_API_URL: server.url,
  SERVICE_TOKEN: server.user(role).cliToken,
  GDS_CONFIG_DIR: '/nonexistent/gds',
});

describe('unknown commands', () => {
  it.each([
    [['gate', 'sugest', 'tbl_x'], 'gds gate suggest tbl_x'],
    [['stauts', 'tbl_1'], 'gds status tbl_1'],
    [['stauts'], 'gds status'],
  ])('piped: %j suggests `%s`, exit 2, nothing run', async (args, meant) => {
    const r = await runInProcess(args, { env: env() });
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain(`Did you mean \`${meant}\`?`);
  });

  it('on a terminal: the same suggestion, no question, nothing run', async () => {
    const [command, argv] = cliCommand(['stauts', server.table('orders').id]);
    const line = `stty cols 100 rows 40; ${[command, ...argv].map((a) => `'${a}'`).join(' ')}`;
    const r = await runInTerminal(line, env()).result;
    expect(r.code).toBe(2);
    expect(r.stdout).toContain(`Did you mean \`gds status ${server.table('orders').id}\`?`);
    expect(r.stdout).not.toContain('(Y/n)');
    expect(r.stdout).not.toContain('orders (');
  });
});

describe('enum values', () => {
  it('config set gate_mode advisory: refused, with the value meant', async () => {
    const r = await runInProcess(['config', 'set', 'gate_mode', 'advisory'], { env: env() });
    expect(r.code).toBe(7);
    expect(r.stderr).toContain('Did you mean `gds config set gate_mode ADVISORY`?');
  });

  it('config set gate_mod ADVISORY: the key meant', async () => {
    const r = await runInProcess(['config', 'set', 'gate_mod', 'ADVISORY'], { env: env() });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('Did you mean `gds config set gate_mode ADVISORY`?');
  });

  it('audit list --event-type table_certified: nothing found, and the action meant', async () => {
    const human = await runInProcess(['audit', 'list', '--event-type', 'table_certified'], { env: env() });
    expect(human.code).toBe(0);
    expect(human.stderr).toContain('Did you mean --event-type TABLE_CERTIFIED?');
    const json = await runInProcess(['audit', 'list', '--event-type', 'table_certified', '--json'], {
      env: env(),
    });
    expect(json.stdout).toBe('');
    expect(JSON.parse(json.stderr.trim().split('\n')[0] ?? '')).toMatchObject({
      warning: { message: expect.stringContaining('TABLE_CERTIFIED') },
    });
  });
});
