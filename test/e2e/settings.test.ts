// gds's own settings kept on disk, as `gh config get/set/list` keeps gh's (`gds config` is the
// workspace's configuration on the service). The file on disk (0600, replaced whole), exit codes, stdout vs
// stderr, every --json line parsing, and the precedence flag > variable > setting, with gds in the test
// process (runInProcess); what a terminal shows with a real process under a pseudo-terminal.
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cliCommand, ensureBuilt, runInTerminal } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let root: string;
let dir: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'gds-settings-'));
  await ensureBuilt();
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

let count = 0;
beforeEach(() => {
  count += 1;
  dir = join(root, `config-${count}`);
});

const env = (extra: Record<string, string | undefined> = {}) => ({ GDS_CONFIG_DIR: dir, ...extra });
const gds = (args: string[], extra: Record<string, string | undefined> = {}) =>
  runInProcess(args, { env: env(extra) });
const lines = (text: string) =>
  text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
const escape = '\u001b[';

describe('gds settings set/get/list/unset', () => {
  it('set writes settings.json (0600 in a 0700 folder, no temp file left); get and list read it', async () => {
    const set = await gds(['settings', 'set', 'pager', 'less -R']);
    expect(set).toMatchObject({ code: 0, stdout: '' });
    expect(set.stderr).toContain('Set pager to less -R');
    const path = join(dir, 'settings.json');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({
      version: 1,
      settings: { pager: 'less -R' },
      aliases: {},
    });
    await gds(['settings', 'set', 'prompt', 'disabled']);
    expect((await readdir(dir)).filter((name) => !name.endsWith('.lock')).sort()).toEqual(['settings.json']);

    const get = await gds(['settings', 'get', 'pager']);
    expect(get).toMatchObject({ code: 0, stdout: 'less -R\n', stderr: '' });
    // Not set: the default, for scripts.
    expect((await gds(['settings', 'get', 'color'])).stdout).toBe('auto\n');

    const list = await gds(['settings', 'list']);
    expect(list.code).toBe(0);
    expect(
      list.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t').slice(0, 3)),
    ).toEqual([
      ['prompt', 'disabled', 'settings'],
      ['browser', '(the desktop opener)', 'default'],
      ['pager', 'less -R', 'settings'],
      ['color', 'auto', 'default'],
    ]);
  });

  it('--json: one parsing line per key on list, one on get/set/unset', async () => {
    const set = await gds(['settings', 'set', 'color', 'never', '--json']);
    expect(lines(set.stdout)).toEqual([
      { key: 'color', value: 'never', previous: null, path: join(dir, 'settings.json') },
    ]);
    const list = lines((await gds(['settings', 'list', '--json'])).stdout);
    expect(list.map((r) => [r.key, r.value, r.source])).toEqual([
      ['prompt', 'enabled', 'default'],
      ['browser', '', 'default'],
      ['pager', '', 'default'],
      ['color', 'never', 'settings'],
    ]);
    expect(list[3]).toMatchObject({ allowedValues: ['auto', 'always', 'never'], overriddenBy: null });
    const first = lines((await gds(['settings', 'list', '-L', '2', '--json'])).stdout);
    expect(first.map((r) => r.key)).toEqual(['prompt', 'browser']);
    const overridden = lines((await gds(['settings', 'get', 'color', '--json'], { NO_COLOR: '1' })).stdout);
    expect(overridden).toEqual([expect.objectContaining({ value: 'never', overriddenBy: 'NO_COLOR' })]);
    const unset = await gds(['settings', 'unset', 'color', '--json']);
    expect(lines(unset.stdout)).toEqual([
      { key: 'color', value: 'auto', previous: 'never', path: join(dir, 'settings.json') },
    ]);
    // Nothing left: the file goes.
    await expect(stat(join(dir, 'settings.json'))).rejects.toThrow('ENOENT');
    const again = await gds(['settings', 'unset', 'color']);
    expect(again).toMatchObject({ code: 0, stdout: '' });
    expect(again.stderr).toContain('color was not set');
  });

  it('an unknown key: exit 2, the key meant and the keys, nothing written', async () => {
    const r = await gds(['settings', 'set', 'promt', 'disabled']);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain('Unknown setting: "promt".');
    expect(r.stderr).toContain('Did you mean `prompt`? The settings are prompt, browser, pager, color.');
    await expect(stat(join(dir, 'settings.json'))).rejects.toThrow('ENOENT');
    const json = await gds(['settings', 'get', 'editor', '--json']);
    expect(json).toMatchObject({ code: 2, stdout: '' });
    expect(lines(json.stderr)).toEqual([
      { error: expect.objectContaining({ code: 'unknown_setting', message: 'Unknown setting: "editor".' }) },
    ]);
  });

  it('a bad value: exit 2 with the allowed values and the one meant', async () => {
    const r = await gds(['settings', 'set', 'color', 'allways']);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain('"allways" is not a value of color.');
    expect(r.stderr).toContain('Did you mean `gds settings set color always`? Allowed: auto, always, never.');
    await expect(stat(join(dir, 'settings.json'))).rejects.toThrow('ENOENT');
  });

  it('a damaged file is named with the fix, and does not stop other commands', async () => {
    await gds(['settings', 'set', 'color', 'never']);
    await writeFile(join(dir, 'settings.json'), '{"version":1,"settings":{"color":"purple"}}');
    const r = await gds(['settings', 'list']);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain('settings.json is damaged');
    expect(r.stderr).toContain('no credentials');
    expect((await gds(['--version'])).code).toBe(0);
    expect(
      (await gds(['auth', 'status', '--offline', '--token', 'cli_x', '--base', 'http://127.0.0.1:9'])).code,
    ).toBe(0);
  });
});

describe('precedence: flag > environment variable > setting > default', () => {
  it('color always colours piped output; NO_COLOR (a variable) beats the setting', async () => {
    await gds(['settings', 'set', 'color', 'always']);
    const coloured = await gds(['settings', 'set', 'prompt', 'enabled']);
    expect(coloured.stderr).toContain(escape);
    const plain = await gds(['settings', 'set', 'prompt', 'enabled'], { NO_COLOR: '1' });
    expect(plain.code).toBe(0);
    expect(plain.stderr).not.toContain(escape);
  });

  it('color never: no colour even on a terminal; without it the same line is coloured', async () => {
    const line = (args: string[]) => {
      const [command, argv] = cliCommand(args);
      return `stty cols 100 rows 40; ${[command, ...argv].map((a) => `'${a}'`).join(' ')}`;
    };
    const before = await runInTerminal(line(['settings', 'set', 'pager', 'less']), env()).result;
    expect(before.code).toBe(0);
    expect(before.stdout).toContain(escape);
    await gds(['settings', 'set', 'color', 'never']);
    const after = await runInTerminal(line(['settings', 'set', 'pager', 'more']), env()).result;
    expect(after.code).toBe(0);
    expect(after.stdout).toContain('Set pager to more');
    expect(after.stdout).not.toContain(escape);
  });

  it('prompt disabled: no question on a terminal; GDS_PROMPT_DISABLED=0 beats the setting', async () => {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const profile = (token: string) => ({ kind: 'static', base: 'http://127.0.0.1:9', token });
    await writeFile(
      join(dir, 'config.json'),
      JSON.stringify({
        version: 1,
        activeProfile: 'a',
        secretStorage: 'file',
        profiles: { a: profile('cli_a'), b: profile('cli_b') },
      }),
    );
    await chmod(join(dir, 'config.json'), 0o600);
    const [command, argv] = cliCommand(['auth', 'switch']);
    const line = `stty cols 100 rows 40; ${[command, ...argv].map((a) => `'${a}'`).join(' ')}`;

    const asked = runInTerminal(line, env({ GDS_SECRET_STORAGE: 'file' }));
    const seen = await untilOutput(asked.child, 'Which profile?');
    asked.child.stdin.write('\u0003');
    expect(seen).toContain('Which profile?');
    expect((await asked.result).code).toBe(130);

    await gds(['settings', 'set', 'prompt', 'disabled']);
    const refused = await runInTerminal(line, env({ GDS_SECRET_STORAGE: 'file' })).result;
    expect(refused.code).toBe(2);
    expect(refused.stdout).toContain('needs --profile <name> when it cannot ask');

    const envWins = runInTerminal(line, env({ GDS_SECRET_STORAGE: 'file', GDS_PROMPT_DISABLED: '0' }));
    expect(await untilOutput(envWins.child, 'Which profile?')).toContain('Which profile?');
    envWins.child.stdin.write('\u0003');
    expect((await envWins.result).code).toBe(130);
  });
});

/** What the child printed, once it has printed `text` (or ended). */
function untilOutput(child: ReturnType<typeof runInTerminal>['child'], text: string): Promise<string> {
  return new Promise((resolve) => {
    let seen = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      if (seen.includes(text)) resolve(seen);
    });
    child.on('close', () => resolve(seen));
  });
}

describe('browser: GDS_BROWSER > the setting > BROWSER (gh order)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  async function opener(name: string): Promise<{ program: string; opened: string }> {
    const opened = join(root, `${name}-${count}.opened`);
    const program = join(root, `${name}-${count}.sh`);
    // Written aside and renamed: the test reads the file as soon as it exists, so it must never see it empty.
    const script = `#!/bin/sh\nprintf '%s' "$1" > '${opened}.part' && mv '${opened}.part' '${opened}'\n`;
    await writeFile(program, script, { mode: 0o755 });
    return { program, opened };
  }

  async function openedBy(
    extra: Record<string, string>,
    candidates: ReadonlyArray<{ opened: string }>,
  ): Promise<number> {
    const orders = server.table('orders').id;
    const r = await gds(['status', orders, '--web'], {
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: server.user('OWNER').cliToken,
      ...extra,
    });
    expect(r.code).toBe(0);
    // The opener runs detached: wait for its file (the test's own timeout bounds the wait).
    for (;;) {
      for (const [index, candidate] of candidates.entries()) {
        const text = await readFile(candidate.opened, 'utf8').catch(() => undefined);
        if (text !== undefined) {
          expect(text).toContain(`/dashboard/tables/${orders}`);
          return index;
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('the setting beats BROWSER, and GDS_BROWSER beats the setting', async () => {
    const setting = await opener('setting');
    const desktop = await opener('desktop');
    expect((await gds(['settings', 'set', 'browser', setting.program])).code).toBe(0);
    expect(await openedBy({ BROWSER: desktop.program }, [setting, desktop])).toBe(0);
    await rm(setting.opened);
    const chosen = await opener('chosen');
    expect(
      await openedBy({ BROWSER: desktop.program, GDS_BROWSER: chosen.program }, [setting, desktop, chosen]),
    ).toBe(2);
  });
});
