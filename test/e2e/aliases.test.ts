// Command aliases as gh's (`gds alias set/list/delete/import`), run by gds in the test process
// (runInProcess; dist/gds when GDS_TEST_CLI names it), and shell aliases by a real gds process, their shell
// writing to gds's own stdout and stderr: an alias expands with its arguments, may not shadow a
// built-in command, and is tried only for a first word that names no command; did-you-mean still answers
// when no alias matches. Shell aliases get their arguments as "$1"…, never pasted into the script.
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cliCommand, ensureBuilt, runCli } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;
let root: string;
let dir: string;

beforeAll(async () => {
  [server] = await Promise.all([startTestServer(), ensureBuilt()]);
  root = await mkdtemp(join(tmpdir(), 'gds-aliases-'));
});

afterAll(async () => {
  await server?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

let count = 0;
beforeEach(() => {
  count += 1;
  dir = join(root, `config-${count}`);
});

const env = () => ({
  GDS_CONFIG_DIR: dir,
  SERVICE_API_URL: server.url,
  SERVICE_TOKEN: server.user('OWNER').cliToken,
});
const gds = (args: string[], input?: string) =>
  runInProcess(args, { env: env(), ...(input === undefined ? {} : { input }) });
// A shell alias's shell inherits gds's stdio: only a gds process's own streams show what it printed.
const gdsProcess = (args: string[]) => runCli(args, { env: env() });
const lines = (text: string) =>
  text
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
const settingsFile = async () =>
  JSON.parse(await readFile(join(dir, 'settings.json'), 'utf8')) as { aliases: Record<string, string> };

describe('gds alias set, then the alias', () => {
  it('expands to the command, the arguments given after it appended', async () => {
    const set = await gds(['alias', 'set', 'ls', 'list --state CERTIFIED']);
    expect(set).toMatchObject({ code: 0, stdout: '' });
    expect(set.stderr).toContain('Added alias ls: gds ls runs gds list --state CERTIFIED');
    expect((await stat(join(dir, 'settings.json'))).mode & 0o777).toBe(0o600);
    expect((await settingsFile()).aliases).toEqual({ ls: 'list --state CERTIFIED' });

    const viaAlias = await gds(['ls', '--json']);
    const direct = await gds(['list', '--state', 'CERTIFIED', '--json']);
    expect(viaAlias.code, viaAlias.stderr).toBe(0);
    const records = lines(viaAlias.stdout);
    expect(records.length).toBeGreaterThan(0);
    expect(records.every((r) => r.state === 'CERTIFIED')).toBe(true);
    expect(viaAlias.stdout).toBe(direct.stdout);
    // Global flags before the alias move behind it, as before any command.
    expect((await gds(['--json', 'ls'])).stdout).toBe(direct.stdout);
  });

  it('$1 takes the first argument (as one word, even with blanks); the rest is appended', async () => {
    const orders = server.table('orders').id;
    await gds(['alias', 'set', 'why', 'status $1 --json']);
    const r = await gds(['why', orders, '--json', 'id,name']);
    expect(r.code, r.stderr).toBe(0);
    expect(lines(r.stdout)).toEqual([{ id: orders, name: 'orders' }]);

    const missing = await gds(['why']);
    expect(missing).toMatchObject({ code: 2, stdout: '' });
    expect(missing.stderr).toContain('The alias why needs 1 argument, and got 0.');
    const missingJson = await gds(['why', '--json']);
    expect(missingJson.code).toBe(2);

    // A placeholder inside a quoted word: the argument is pasted as text, never split or run.
    const set = await gds(['alias', 'set', 'idof', 'list --jq "select(.name == \\"$1\\") | .id"']);
    expect(set.code, set.stderr).toBe(0);
    const id = await gds(['idof', 'orders']);
    expect(id).toMatchObject({ code: 0, stdout: `${orders}\n` });
    const spaced = await gds(['idof', 'no such; echo hi']);
    expect(spaced).toMatchObject({ code: 0, stdout: '' });
  });

  it('an alias may not shadow a built-in command or topic: exit 2 with the reason, nothing stored', async () => {
    for (const name of ['list', 'gate', 'config', 'help', 'version']) {
      const r = await gds(['alias', 'set', name, 'status']);
      expect(r, name).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr).toContain('an alias may not shadow a built-in command');
    }
    await expect(stat(join(dir, 'settings.json'))).rejects.toThrow('ENOENT');
    const json = await gds(['alias', 'set', 'list', 'status', '--json']);
    expect(lines(json.stderr)).toEqual([
      { error: expect.objectContaining({ code: 'alias_shadows_command' }) },
    ]);
  });

  it('an expansion that is no gds command is refused; an existing alias is replaced only with --clobber', async () => {
    const notCommand = await gds(['alias', 'set', 'x', 'gds list']);
    expect(notCommand.code).toBe(2);
    expect(notCommand.stderr).toContain('does not start with a gds command');
    await gds(['alias', 'set', 'q', 'quarantine list']);
    const again = await gds(['alias', 'set', 'q', 'list']);
    expect(again.code).toBe(6);
    expect(again.stderr).toContain('The alias q exists already');
    const clobber = await gds(['alias', 'set', 'q', 'list', '--clobber', '--json']);
    expect(lines(clobber.stdout)).toEqual([
      { name: 'q', expansion: 'list', shell: false, previous: 'quarantine list' },
    ]);
  });

  it('"-" reads the expansion from stdin', async () => {
    const r = await gds(['alias', 'set', 'jobs', '-'], 'gate jobs $1 --json\n');
    expect(r.code, r.stderr).toBe(0);
    expect((await settingsFile()).aliases.jobs).toBe('gate jobs $1 --json');
  });
});

describe('unknown words', () => {
  it('did-you-mean still answers when no alias matches, and knows the aliases', async () => {
    const none = await gds(['stauts', 'tbl_1']);
    expect(none).toMatchObject({ code: 2, stdout: '' });
    expect(none.stderr).toContain('Did you mean `gds status tbl_1`?');
    await gds(['alias', 'set', 'certified', 'list --state CERTIFIED']);
    const typo = await gds(['certifed']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('Did you mean `gds certified`?');
    const stillCommand = await gds(['stauts', 'tbl_1']);
    expect(stillCommand.stderr).toContain('Did you mean `gds status tbl_1`?');
  });

  it('a damaged settings file is reported for an alias, and does not stop a command', async () => {
    await gds(['alias', 'set', 'ls', 'list']);
    await writeFile(join(dir, 'settings.json'), '{"version":1,"aliases":{"ls":');
    const alias = await gds(['ls']);
    expect(alias).toMatchObject({ code: 2, stdout: '' });
    expect(alias.stderr).toContain('settings.json is damaged');
    const command = await gds(['list', '--json']);
    expect(command.code, command.stderr).toBe(0);
    expect(lines(command.stdout).length).toBeGreaterThan(0);
  });
});

describe('a settings file the aliases cannot be read from', () => {
  it.each([
    [
      'damaged',
      '{"version":1,"aliases":{"ls":',
      'settings_invalid',
      'the gds settings file % is damaged: it is not valid JSON',
    ],
    [
      'from a newer gds',
      '{"version":2,"aliases":{"ls":"list"}}',
      'settings_too_new',
      '% was written by a newer gds',
    ],
  ])(
    '%s: the word is no command, the file is named with its fix, exit 2, the file left as it was',
    async (_name, text, code, why) => {
      const path = join(dir, 'settings.json');
      await mkdir(dir, { recursive: true });
      await writeFile(path, text);
      for (const word of ['ls', 'lsit']) {
        const r = await gds([word]);
        expect(r).toMatchObject({ code: 2, stdout: '' });
        const [message, suggestion] = r.stderr.split('\n');
        expect(message).toContain(
          `Error: Unknown command: ${word}, and the aliases cannot be read to look for it: ${why.replace('%', path)}`,
        );
        expect(suggestion).toMatch(code === 'settings_invalid' ? `(rm ${path})` : 'Upgrade gds');
        const json = await gds([word, '--json']);
        expect(json).toMatchObject({ code: 2, stdout: '' });
        expect(lines(json.stderr)).toEqual([{ error: expect.objectContaining({ code }) }]);
      }
      expect(await readFile(path, 'utf8')).toBe(text);
    },
  );
});

describe('shell aliases (--shell, or an expansion starting with !)', () => {
  it('run through sh with the arguments as "$1"…, never as script; the exit code is the shell’s', async () => {
    const set = await gds(['alias', 'set', '--shell', 'say', 'printf "<%s>" "$1" "$2"; exit 3']);
    expect(set.code, set.stderr).toBe(0);
    expect((await settingsFile()).aliases.say).toBe('!printf "<%s>" "$1" "$2"; exit 3');
    const planted = join(root, `pwned-${count}`);
    const r = await gdsProcess(['say', `a b; touch ${planted}`, '$(touch x)']);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe(`<a b; touch ${planted}><$(touch x)>`);
    await expect(stat(planted)).rejects.toThrow('ENOENT');
  });

  it('can pipe gds into another program', async () => {
    await gds(['alias', 'set', 'names', '!gds list --json | grep -c "\\"name\\""']);
    const expected = lines((await gds(['list', '--json'])).stdout).length;
    // `gds` inside the script is the one on PATH: point it at the CLI under test.
    const [command, argv] = cliCommand([]);
    const bin = join(root, `bin-${count}`);
    await mkdir(bin);
    await writeFile(
      join(bin, 'gds'),
      `#!/bin/sh\nexec ${[command, ...argv].map((a) => `'${a}'`).join(' ')} "$@"\n`,
      { mode: 0o755 },
    );
    const r = await runCli(['names'], { env: { ...env(), PATH: `${bin}:${process.env.PATH ?? ''}` } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(String(expected));
  });
});

describe('gds alias list, delete, import', () => {
  it('list: a table piped, one parsing line per alias under --json', async () => {
    const empty = await gds(['alias', 'list']);
    expect(empty).toMatchObject({ code: 0, stdout: '' });
    expect(empty.stderr).toContain('No aliases.');
    await gds(['alias', 'set', 'ls', 'list --state CERTIFIED']);
    await gds(['alias', 'set', '-s', 'hi', 'echo hi']);
    expect((await gds(['alias', 'list'])).stdout).toBe('hi\t!echo hi\nls\tlist --state CERTIFIED\n');
    expect(lines((await gds(['alias', 'list', '--json'])).stdout)).toEqual([
      { name: 'hi', expansion: '!echo hi', shell: true },
      { name: 'ls', expansion: 'list --state CERTIFIED', shell: false },
    ]);
  });

  it('delete: the alias goes (the file with the last one); an unknown one is exit 5 with the one meant', async () => {
    await gds(['alias', 'set', 'ls', 'list']);
    const unknown = await gds(['alias', 'delete', 'lss']);
    expect(unknown).toMatchObject({ code: 5, stdout: '' });
    expect(unknown.stderr).toContain('Did you mean `gds alias delete ls`?');
    const deleted = await gds(['alias', 'delete', 'ls', '--json']);
    expect(lines(deleted.stdout)).toEqual([{ name: 'ls', expansion: 'list', shell: false }]);
    await expect(stat(join(dir, 'settings.json'))).rejects.toThrow('ENOENT');
    const after = await gds(['ls']);
    expect(after.code).toBe(2);
    expect(after.stderr).toContain('Unknown command: ls.');
  });

  it('import: all or nothing, from a YAML file or stdin', async () => {
    const refused = await gds(['alias', 'import', '-'], 'ok: list\nlist: status\n');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('list is a gds command');
    await expect(stat(join(dir, 'settings.json'))).rejects.toThrow('ENOENT');
    const file = join(root, `aliases-${count}.yml`);
    await writeFile(file, "ls: list --state CERTIFIED\nwhy: 'status $1'\nhi: '!echo hi'\n");
    const imported = await gds(['alias', 'import', file, '--json']);
    expect(imported.code, imported.stderr).toBe(0);
    expect(lines(imported.stdout).map((r) => [r.name, r.shell, r.previous])).toEqual([
      ['ls', false, null],
      ['why', false, null],
      ['hi', true, null],
    ]);
    const clash = await gds(['alias', 'import', '-'], 'ls: quarantine list\n');
    expect(clash.code).toBe(6);
    expect((await settingsFile()).aliases.ls).toBe('list --state CERTIFIED');
  });

  it('completion offers the aliases, with the flags of the command they run', async () => {
    await gds(['alias', 'set', 'ls', 'list --state CERTIFIED']);
    const words = await gds(['__complete', 'line', '--', 'l']);
    expect(words.stdout).toContain('ls\talias: list --state CERTIFIED');
    const flags = await gds(['__complete', 'line', '--', 'ls', '--sta']);
    expect(flags.stdout).toContain('--state');
  });
});
