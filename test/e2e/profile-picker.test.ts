// The profile picker of `gds auth switch` in a terminal of 80 columns,
// as a person meets it: one line per profile, none wrapped, with its base, user and kind; a long base URL is
// cut (`…`), never the profile's name or kind. The arrow keys pick, Enter takes. Run in tmux.
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCommand, cliEnv, ensureBuilt } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import { needs, noTmux } from '../helpers/skip.js';
import { startTerminal } from '../helpers/tmux.js';

let server: TestServer;
let configDir: string;

const LONG_BASES = {
  'staging-eu': 'https://governed-data.staging.eu-west-1.analytics.example-corporation.com',
  prod: 'https://governed-data.production.us-east-1.analytics.example-corporation.com/gds',
};

const env = () => ({ GDS_CONFIG_DIR: configDir, GDS_SECRET_STORAGE: 'file' });

beforeAll(async () => {
  [server] = await Promise.all([startTestServer(), ensureBuilt()]);
  configDir = await mkdtemp(join(tmpdir(), 'gds-picker-'));
  for (const [name, base] of Object.entries(LONG_BASES)) {
    const set = await runInProcess(
      [
        'auth',
        'set',
        '--token',
        `cli_${name.replace('-', '')}0123456789`,
        '--base',
        base,
        '--profile',
        name,
        '--no-verify',
      ],
      { env: env() },
    );
    expect(set.code, set.stderr).toBe(0);
  }
  const work = await runInProcess(
    ['auth', 'set', '--token', server.user('OWNER').cliToken, '--base', server.url, '--profile', 'work'],
    { env: env() },
  );
  expect(work.code, work.stderr).toBe(0);
});

afterAll(async () => {
  await server?.close();
});

describe('the profile picker at 80 columns', needs(noTmux), () => {
  it('one line per profile (name, base cut to fit, user, kind), arrows pick, Enter switches', async () => {
    const [command, args] = cliCommand(['auth', 'switch']);
    // A shell runs gds and prints its exit status on the screen: tmux can mark the pane dead (its terminal
    // closed) without ever learning the status of the program it started.
    const term = await startTerminal(['sh', '-c', '"$0" "$@"; echo "[exit $?]"', command, ...args], {
      width: 80,
      height: 24,
      env: cliEnv(env()),
    });
    try {
      const screen = await term.waitFor(/Which profile\?[\s\S]*work/);
      const rows = screen.split('\n');
      const rowOf = (name: string) => rows.filter((row) => new RegExp(`^[❯ ] ${name} `).test(row));
      for (const name of [...Object.keys(LONG_BASES), 'work']) {
        // The profile is on one row, and that row holds its kind: nothing wrapped to the next one.
        expect(rowOf(name), screen).toHaveLength(1);
        expect(rowOf(name)[0]).toContain('CLI token');
        expect(rowOf(name)[0]?.length).toBeLessThan(80);
      }
      expect(rowOf('work')[0]).toContain('owner@example.com');
      // The first profile stored is the active one.
      expect(rowOf('staging-eu')[0]).toContain('(active)');
      // The long bases are cut, from their start as a person reads them.
      expect(rowOf('prod')[0]).toMatch(/ https:\/\/governed-data\.\S*…/);
      expect(screen).not.toContain(LONG_BASES.prod);
      // No row of the list is the rest of a wrapped line.
      const listed = rows.filter((row) => /^[❯ ] \S/.test(row));
      expect(listed.length).toBe(3);

      // The list is in name order with staging-eu (active) selected: Down picks work.
      await term.send('Down', 'Enter');
      const ended = await term.waitFor(/\[exit \d+\]/);
      expect(ended).toMatch(/^✓ work is the active profile \(http:\/\/127\.0\.0\.1:\d+\/v1\)\.$/m);
      expect(ended).toContain('[exit 0]');
      // The answered question names the profile alone, on one line: not the picker's row, which wrapped.
      // (It may have scrolled off the visible screen: tmux scrolls it up as the picker's lines are erased.)
      const answered = (await term.scrollback()).split('\n').filter((row) => row.includes('Which profile?'));
      expect(answered.at(-1)).toMatch(/^. Which profile\? work$/);
      const config = JSON.parse(await readFile(join(configDir, 'config.json'), 'utf8')) as {
        activeProfile: string;
      };
      expect(config.activeProfile).toBe('work');
    } finally {
      await term.close();
    }
  });
});
